"""Names a person recognises: concept labels (noun phrases) and intent titles (to-do items),
drawn from the events' own words. See :mod:`topologies.naming.namer`."""

from topologies.naming.namer import Namer, next_naming
from topologies.naming.titles import redate, with_deadline

__all__ = ["Namer", "next_naming", "redate", "with_deadline"]
