"""Import speed of the mbox e-mail source: generate an mbox, read it, report emails/s.

.venv/bin/python benchmarks/bench_mbox_import.py [--count 10000]
"""

from __future__ import annotations

import argparse
import mailbox
import os
import platform
import random
import tempfile
import time
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid
from pathlib import Path

from tqdm import tqdm

from connectors.base import BadItem
from connectors.email import MboxSource

RESULTS = Path(__file__).resolve().parent / "results" / "mbox_import.md"
PEOPLE = [("Alice Example", "alice@example.com"), ("Bob Builder", "bob@example.com"),
          ("Carol Manager", "carol@contoso.com"), ("Jean Dupont", "jean@exemple.fr"),
          ("Dana Park", "dana@example.org"), ("Erik Svensson", "erik@example.se")]  # fmt: skip
WORDS = [
    "lease", "budget", "offsite", "agenda", "flight", "hotel", "review", "deadline", "invoice",
    "contract", "meeting", "report", "draft", "launch", "hiring", "train", "tickets", "deposit",
]  # fmt: skip


def make_message(n: int, rng: random.Random, parents: list[str]) -> EmailMessage:
    msg = EmailMessage()
    sender, rcpt = rng.sample(PEOPLE, 2)
    msg["From"] = f"{sender[0]} <{sender[1]}>"
    msg["To"] = f"{rcpt[0]} <{rcpt[1]}>"
    topic = " ".join(rng.choices(WORDS, k=4))
    msg["Subject"] = f"Réunion {topic} #{n}" if n % 7 == 0 else f"About the {topic} #{n}"
    when = datetime(2024, 1, 1, tzinfo=UTC) + timedelta(minutes=7 * n)
    msg["Date"] = format_datetime(when)
    msg["Message-ID"] = make_msgid(idstring=str(n), domain="bench.example")
    text = "\n\n".join(" ".join(rng.choices(WORDS, k=30)) + "." for _ in range(rng.randint(1, 4)))
    if parents and n % 3 == 0:
        parent = rng.choice(parents)
        msg["In-Reply-To"] = parent
        msg["References"] = parent
        text += "\n\nOn Mon, 1 Jan 2024, Bob wrote:\n> " + "\n> ".join(rng.choices(WORDS, k=10))
    text += "\n\n-- \n" + sender[0]
    msg.set_content(text)
    if n % 4 == 0:
        msg.add_alternative(f"<html><body><p>{text.replace(chr(10), '<br>')}</p></body></html>",
                            subtype="html")  # fmt: skip
    if n % 10 == 0:
        msg.add_attachment(os.urandom(2048), maintype="application", subtype="pdf",
                           filename=f"report-{n}.pdf")  # fmt: skip
    parents.append(msg["Message-ID"])
    return msg


def generate(path: Path, count: int) -> None:
    rng = random.Random(42)
    box = mailbox.mbox(path)
    parents: list[str] = []
    box.lock()
    try:
        for n in tqdm(range(count), desc="generate", unit="msg"):
            box.add(make_message(n, rng, parents[-50:]))
        box.flush()
    finally:
        box.unlock()
        box.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--no-write", action="store_true", help="do not write the results file")
    parser.add_argument("--mbox", type=Path, help="generate into (or reuse) this file")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = args.mbox or Path(tmp) / "bench.mbox"
        if not path.exists():
            generate(path, args.count)
        size_mb = path.stat().st_size / 1e6
        events = bad = 0
        load_before = os.getloadavg()[0]
        start = time.perf_counter()
        source = MboxSource(path, "bench")
        for item in tqdm(source.read(), total=args.count, desc="import", unit="email"):
            if isinstance(item, BadItem):
                bad += 1
            else:
                events += 1
        elapsed = time.perf_counter() - start
    rate = args.count / elapsed
    summary = (
        f"{args.count} emails ({size_mb:.1f} MB mbox) -> {events} events, {bad} bad, "
        f"in {elapsed:.2f} s: {rate:,.0f} emails/s"
    )
    print(summary)
    if not args.no_write:
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text(
            "# mbox import benchmark\n\n"
            "`benchmarks/bench_mbox_import.py`: a generated mbox (plain, HTML alternatives, "
            "replies with quotes and signatures, PDF attachments, encoded subjects) read through "
            "`connectors.email.MboxSource` (parse, decode, trim, map to RawEvent).\n\n"
            "| emails | mbox size | events | bad | seconds | emails/s |\n"
            "|---|---|---|---|---|---|\n"
            f"| {args.count} | {size_mb:.1f} MB | {events} | {bad} | {elapsed:.2f} "
            f"| {rate:,.0f} |\n\n"
            f"Python {platform.python_version()} on {platform.machine()}, "
            f"{os.cpu_count()} CPUs, load average {load_before:.1f} -> {os.getloadavg()[0]:.1f} "
            f"(a shared machine: the rate is CPU-bound and scales with free CPU), "
            f"{datetime.now(UTC):%Y-%m-%d}. Most of the time is the stdlib MIME parser.\n"
        )


if __name__ == "__main__":
    main()
