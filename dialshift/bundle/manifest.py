"""A bundle's manifest (``bundle.json``), its id, the fp16 backbone it carries and what every step writes.

The manifest names the paper whose protocol the bundle carries (``paper``: ``lee``, ``han`` or ``xing``; a
manifest without it is a Lee et al. bundle), the protocol, the steps with their estimates (:mod:`.steps`), the
sizes and the dataset's revision. The backbone is carried in fp16, zstd-compressed, and upcast to fp32 on arrival.
"""

import hashlib
import shutil
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from dialshift.errors import DialshiftError

BUNDLE_FILE = "bundle.json"
BUNDLE_FORMAT = "dialshift-bundle/1"
LIMIT_BYTES = 60 * 2**20
#: The fp16 weights, zstd-compressed (pyarrow's codec; level 3 saves about 8 %, higher levels no more).
WEIGHTS_FILE = "model.safetensors.zst"
BACKBONE_FILES = ("config.json", "tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json",
                  "sentencepiece.bpe.model")
DEFAULT_WORK = "/tmp/dialshift-gpu-work"
#: The folders of a bundle its id is the digest of (not run.sh and bundle.json, which name the id).
CONTENT = ("backbone", "data", "trainers", "wheels")
#: The papers whose protocols a bundle can carry; a manifest that names none is a Lee et al. bundle.
PAPERS = ("lee", "han", "xing")
DEFAULT_PAPER = "lee"


def folder_size(path: Path) -> int:
    return sum(p.stat().st_size for p in Path(path).rglob("*") if p.is_file())


#: The rows of the word-embedding matrix a vocabulary-reduced backbone carries, and the matrix's full row count.
KEPT_ROWS, VOCABULARY_ROWS = "dialshift.kept_rows", "dialshift.vocabulary_rows"
#: Tokenizer files larger than this travel zstd-compressed (``NAME.zst``), unpacked on arrival.
PACK_ABOVE_BYTES = 2**20


def _pack(data: bytes) -> bytes:
    import pyarrow as pa

    return len(data).to_bytes(8, "little") + pa.Codec("zstd", compression_level=3).compress(data, asbytes=True)


def _unpack(packed: bytes) -> bytes:
    import pyarrow as pa

    return pa.Codec("zstd").decompress(packed[8:], decompressed_size=int.from_bytes(packed[:8], "little"),
                                       asbytes=True)


def save_fp16_backbone(name: str, out: Path, keep_texts=None) -> dict:
    """The backbone ``name`` (``minilm``, ``tiny`` or a folder) as ``out/model.safetensors.zst`` (fp16, zstd) with
    its config and tokenizer; return the manifest's description of it (``backbone``: the resolved name).

    With ``keep_texts``, the word-embedding matrix keeps only the rows of the tokens those texts tokenize into and
    the special tokens (:data:`KEPT_ROWS`); :func:`upcast_backbone` puts them back in place in a matrix of zeros, so
    the model computes the same on those texts (a row no text looks up changes no output)."""
    import torch
    from safetensors.torch import load_file, save

    from dialshift.io import atomic_write
    from dialshift.models.backbones import TINY_MODEL, load_backbone, minilm_path

    out.mkdir(parents=True, exist_ok=True)
    model, tokenizer, resolved = load_backbone(name, seed=0)
    described = {"backbone": resolved, "backbone_dtype": "float16 (upcast to float32 on arrival)"}
    if name == TINY_MODEL:  # random weights: the base model as a tiny run would initialise it
        state = model.base_model.state_dict()
    else:
        folder = minilm_path() if name == "minilm" else Path(name)
        if not (folder / "model.safetensors").is_file():
            raise DialshiftError(f"{folder}: no model.safetensors to put in the bundle (a local model folder is "
                                 "needed)")
        state = load_file(str(folder / "model.safetensors"))
    if keep_texts is not None:
        key = next(k for k in state if k.endswith("word_embeddings.weight"))
        kept = set(tokenizer.all_special_ids)
        for ids in tokenizer(list(keep_texts), add_special_tokens=False)["input_ids"]:
            kept.update(ids)
        rows = torch.as_tensor(sorted(kept), dtype=torch.int64)
        state = {**state, key: state[key][rows], KEPT_ROWS: rows,
                 VOCABULARY_ROWS: torch.as_tensor([state[key].shape[0]], dtype=torch.int64)}
        described["embedding_rows"] = {"kept": len(rows), "of": int(state[VOCABULARY_ROWS][0])}
    half = {key: (value.to(torch.float16) if value.is_floating_point() else value).contiguous()
            for key, value in state.items()}
    atomic_write(out / WEIGHTS_FILE, _pack(save(half, metadata={"format": "pt",
                                                                "dialshift": "fp16, upcast on arrival"})))
    model.base_model.config.save_pretrained(out)
    tokenizer.save_pretrained(out)
    for extra in list(out.iterdir()):  # only what loading needs
        if extra.name not in (*BACKBONE_FILES, WEIGHTS_FILE):
            shutil.rmtree(extra) if extra.is_dir() else extra.unlink()
        elif extra.name != WEIGHTS_FILE and extra.stat().st_size > PACK_ABOVE_BYTES:
            atomic_write(out / f"{extra.name}.zst", _pack(extra.read_bytes()))
            extra.unlink()
    return described


def content_id(bundle: Path) -> str:
    """The bundle's id: the first 12 hex digits of the digest of its carried files (:data:`CONTENT`)."""
    from dialshift.io import files_digest

    files = sorted(p for part in CONTENT for p in (bundle / part).rglob("*")
                   if p.is_file() and "__pycache__" not in p.parts)
    return files_digest(files, root=bundle)[:12]


def upcast_backbone(bundle: Path, work: Path) -> Path:
    """The bundle's backbone in fp32 under ``work`` (made once per bundle revision)."""
    import pyarrow as pa
    import torch
    from safetensors import SafetensorError
    from safetensors.torch import load, save_file

    manifest = read_manifest(bundle)
    target = work / f"backbone-{manifest['id']}"
    if (target / ".complete").is_file():
        return target
    if content_id(bundle) != manifest["id"]:
        raise DialshiftError(f"{bundle}: its files differ from those of bundle {manifest['id']} (changed or damaged "
                             "since `dialshift bundle create`); copy the bundle again")
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    source = bundle / "backbone"
    packed = (source / WEIGHTS_FILE).read_bytes()
    try:
        state = load(_unpack(packed))
    except (pa.ArrowException, SafetensorError, ValueError, OSError, MemoryError) as error:
        raise DialshiftError(f"{source / WEIGHTS_FILE}: damaged ({type(error).__name__}: {error}); copy the bundle "
                             "again") from error
    if KEPT_ROWS in state:  # a vocabulary-reduced matrix: its rows back in place
        rows, total = state.pop(KEPT_ROWS), int(state.pop(VOCABULARY_ROWS)[0])
        key = next(k for k in state if k.endswith("word_embeddings.weight"))
        full = torch.zeros((total, state[key].shape[1]), dtype=state[key].dtype)
        full[rows] = state[key]
        state[key] = full
    save_file({k: (v.to(torch.float32) if v.is_floating_point() else v) for k, v in state.items()},
              str(target / "model.safetensors"), metadata={"format": "pt"})
    for name in BACKBONE_FILES:
        if (source / name).is_file():
            shutil.copy2(source / name, target / name)
        elif (source / f"{name}.zst").is_file():
            (target / name).write_bytes(_unpack((source / f"{name}.zst").read_bytes()))
    (target / ".complete").write_text("")
    return target


def read_manifest(bundle) -> dict:
    """``BUNDLE/bundle.json``, with the fields that listing and running steps read checked (one line otherwise)."""
    path = Path(bundle) / BUNDLE_FILE
    if not path.is_file():
        raise DialshiftError(f"{bundle}: not a dialshift bundle (no {BUNDLE_FILE}; make one with `dialshift bundle "
                             "create`)")
    from dialshift.returned import read_json_object

    remake = "copy the bundle again or make a new one with `dialshift bundle create`"
    manifest = read_json_object(path, "bundle manifest", remake)
    if manifest.get("format") != BUNDLE_FORMAT:
        raise DialshiftError(f"{path}: unknown bundle format {manifest.get('format')!r} (expected {BUNDLE_FORMAT}); "
                             f"{remake}")
    number = (int, float)
    fields = {"id": str, "dataset_revision": str, "protocol": dict, "train_instances": int, "steps": list}
    step_fields = {"name": str, "what": str, "seconds": number, "returns": list, "return_bytes": dict}
    problems = [f"field {key!r} must be a {kind.__name__}" for key, kind in fields.items()
                if not isinstance(manifest.get(key), kind) or isinstance(manifest.get(key), bool)]
    for i, step in enumerate(manifest.get("steps") if not problems else []):
        if not isinstance(step, dict):
            problems.append(f"steps[{i}] must be an object")
            continue
        problems += [f"steps[{i}].{key} has the wrong type" for key, kind in step_fields.items()
                     if not isinstance(step.get(key), kind) or isinstance(step.get(key), bool)]
        problems += [f"steps[{i}].{key} has the wrong type" for key in ("needs", "seconds_at_old_speed")
                     if key in step and not isinstance(step[key], str if key == "needs" else number)]
        if not problems and not (all(isinstance(r, str) for r in step["returns"])
                                 and all(isinstance(b, number) for b in step["return_bytes"].values())):
            problems.append(f"steps[{i}].returns or return_bytes has the wrong type")
    if manifest.get("paper", DEFAULT_PAPER) not in PAPERS:
        problems.append(f"field 'paper' must be one of {', '.join(PAPERS)}")
    if problems:
        raise DialshiftError(f"{path}: {problems[0]}; {remake}")
    return manifest


def paper_of(manifest: dict) -> str:
    """The paper whose protocol the bundle carries."""
    return manifest.get("paper", DEFAULT_PAPER)


def step_description(bundle: Path, manifest: dict, step: str) -> dict:
    """The fields every step's description starts with: what ran, from which bundle, where and when."""
    import dialshift

    return {"step": step, "bundle": manifest["id"], "dataset_revision": manifest["dataset_revision"],
            "device": device_name(), "dialshift_from": str(Path(dialshift.__file__).parent),
            "started": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), "protocol": manifest["protocol"]}


def find_step(manifest: dict, name: str) -> dict:
    for entry in manifest["steps"]:
        if entry["name"] == name:
            return entry
    raise DialshiftError(f"no step {name!r} in this bundle; steps: {', '.join(s['name'] for s in manifest['steps'])}")


def ids_digest(ids) -> str:
    return hashlib.sha1("\n".join(ids).encode("utf-8")).hexdigest()


def save_step(out: Path, name: str, arrays: dict, description: dict) -> None:
    from dialshift.io import write_json_atomic

    np.savez_compressed(out / f"{name}.npz", **arrays)
    write_json_atomic(out / f"{name}.json", description)


def device_name() -> str:
    import torch

    return torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu"


def run_trainer(bundle: Path, script: str, argv: list, output: Path, what: str) -> float:
    """Run the bundle's copy of ``trainers/<script>`` (by path: the library imports no script package) with ``argv``
    writing ``output``, resumed from its latest checkpoint when a call cut off at 10 minutes left one; return the
    seconds it took."""
    import runpy

    from dialshift.training import resolve_checkpoint

    trainer_main = runpy.run_path(str(bundle / "trainers" / script), run_name="dialshift_bundle_trainer")["main"]
    try:
        resolve_checkpoint(output, "latest")
        argv = [*argv, "--resume-from-checkpoint", "latest"]  # a call cut off at 10 minutes continues where it stopped
    except DialshiftError:
        pass
    started = time.perf_counter()
    if trainer_main(argv):
        raise DialshiftError(f"training {what} failed (see the trainer's message above)")
    return time.perf_counter() - started


def trainer_namespace(bundle: Path, script: str) -> dict:
    """The functions of the bundle's copy of ``trainers/<script>``."""
    import runpy

    return runpy.run_path(str(bundle / "trainers" / script), run_name="dialshift_bundle_trainer")
