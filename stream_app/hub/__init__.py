"""What every hub shares: read-only views of a tenant's memory."""
