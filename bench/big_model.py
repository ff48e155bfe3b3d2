"""A model over 2 GB with external data (issue 7): loads, runs, and what session creation costs in memory.

Writes into a temporary folder a model whose one initializer, table float[N, 1024] (2.2 GB by default, past
protobuf's 2 GiB limit, so it can only live in external data), feeds two nodes:
    rows = Gather(table, idx)        checked byte for byte against the file's rows
    y    = MatMul(x, table)          checked against a float64 product within the float32 dot-product bound
Each measurement runs in a fresh child process, which reports its peak RSS (VmHWM) over session creation alone,
beside the file's size:
    mapped:  the tensor at an aligned offset, which lockstep memory-maps (copy-on-write)
    read:    the same graph over the same file at offset 2 (not float-aligned), which lockstep must read into memory
The read model only measures creation: its shifted bytes are not the table.
    python3 bench/big_model.py [--rows N] [--dir DIR]
Needs about 2.3 GB of free disk and 5 GB of memory (the read case holds a full copy)."""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import TensorProto, helper

COLS = 1024
CHUNK_ROWS = 16384
PAD = 2  # the read model's offset: not a multiple of 4, so mapping is not possible


def status_mib(*keys):
    with open("/proc/self/status") as f:
        fields = dict(line.split(":", 1) for line in f)
    return {k: int(fields[k].split()[0]) / 1024 for k in keys}


def reset_peak():
    """Resets VmHWM to the current RSS (Linux's clear_refs 5), so that the next reading is the creation's peak."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def write_data(path, rows):
    """table[i] from a generator seeded per chunk, then PAD bytes so that the read model's span fits."""
    with open(path, "wb") as f:
        for start in range(0, rows, CHUNK_ROWS):
            n = min(CHUNK_ROWS, rows - start)
            rng = np.random.default_rng(start)
            f.write(rng.standard_normal((n, COLS), dtype=np.float32).tobytes())
        f.write(b"\0" * PAD)


def write_model(path, data_name, rows, offset):
    table = TensorProto(name="table", data_type=TensorProto.FLOAT, dims=[rows, COLS],
                        data_location=TensorProto.EXTERNAL)
    for key, value in (("location", data_name), ("offset", str(offset)), ("length", str(rows * COLS * 4))):
        table.external_data.add(key=key, value=value)
    graph = helper.make_graph(
        [helper.make_node("Gather", ["table", "idx"], ["rows"], name="gather", axis=0),
         helper.make_node("MatMul", ["x", "table"], ["y"], name="matmul")], "big",
        [helper.make_tensor_value_info("idx", TensorProto.INT64, ["K"]),
         helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, rows])],
        [helper.make_tensor_value_info("rows", TensorProto.FLOAT, ["K", COLS]),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, COLS])], [table])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    with open(path, "wb") as f:
        f.write(model.SerializeToString())


def child(model_path, data_path, rows, check):
    import lockstep

    before = status_mib("VmRSS")["VmRSS"]
    reset_peak()
    start = time.perf_counter()
    session = lockstep.InferenceSession(model_path)
    created = time.perf_counter() - start
    after = status_mib("VmHWM", "RssAnon", "RssFile")
    print(f"  session created in {created:.2f} s; RSS before {before:.0f} MiB, peak during creation "
          f"{after['VmHWM']:.0f} MiB (+{after['VmHWM'] - before:.0f}); anonymous {after['RssAnon']:.0f} MiB, "
          f"file-backed {after['RssFile']:.0f} MiB")
    if not check:
        return 0
    table = np.memmap(data_path, np.float32, "r", 0, (rows, COLS))
    rng = np.random.default_rng(7)
    idx = np.concatenate([[0, rows - 1], rng.integers(0, rows, 62)]).astype(np.int64)
    x = rng.standard_normal((1, rows), dtype=np.float32)
    start = time.perf_counter()
    got_rows, got_y = session.run(None, {"idx": idx, "x": x})
    ran = time.perf_counter() - start
    run_rss = status_mib("VmRSS", "RssAnon", "RssFile")
    print(f"  first run in {ran:.2f} s; RSS after it {run_rss['VmRSS']:.0f} MiB: anonymous {run_rss['RssAnon']:.0f} MiB, "
          f"file-backed {run_rss['RssFile']:.0f} MiB (the MatMul reads every page of the mapped file)")
    rows_ok = got_rows.tobytes() == np.ascontiguousarray(table[idx]).tobytes()
    want, scale = np.zeros(COLS), np.zeros(COLS)
    for s in range(0, rows, CHUNK_ROWS):  # float64 reference, a chunk of the file at a time
        block = np.asarray(table[s:s + CHUNK_ROWS], np.float64)
        want += x[0, s:s + CHUNK_ROWS].astype(np.float64) @ block
        scale += np.abs(x[0, s:s + CHUNK_ROWS]).astype(np.float64) @ np.abs(block)
    u = 2.0 ** -24
    bound = rows * u / (1 - rows * u)  # |error| <= gamma_n sum |x||w| for any summation order
    ratio = float(np.max(np.abs(got_y[0] - want) / scale))
    print(f"  Gather rows (64 of {rows}): {'byte-identical' if rows_ok else 'DIFFERENT'} to the file; "
          f"MatMul: max |y - y64| / sum|x||w| = {ratio:.2e} (bound gamma_n = {bound:.2e}: "
          f"{'within' if ratio <= bound else 'OUTSIDE'})")
    return 0 if rows_ok and ratio <= bound else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=540_000, help="rows of table (1024 floats each)")
    parser.add_argument("--dir", help="folder for the model (default: a temporary folder, removed afterwards)")
    parser.add_argument("--child", nargs=3, metavar=("MODEL", "DATA", "CHECK"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args.child[0], args.child[1], args.rows, args.child[2] == "1")

    nbytes = args.rows * COLS * 4
    folder = args.dir or tempfile.mkdtemp(prefix="lockstep-big-")
    free = shutil.disk_usage(folder).free
    if free < nbytes + (256 << 20):
        print(f"{folder}: {free / 2**30:.1f} GiB free, the model needs {nbytes / 2**30:.2f} GiB", file=sys.stderr)
        return 2
    try:
        start = time.perf_counter()
        write_data(os.path.join(folder, "table.bin"), args.rows)
        write_model(os.path.join(folder, "mapped.onnx"), "table.bin", args.rows, 0)
        write_model(os.path.join(folder, "read.onnx"), "table.bin", args.rows, PAD)
        print(f"table float[{args.rows},{COLS}]: {nbytes} bytes ({nbytes / 2**30:.2f} GiB) of external data, "
              f"written in {time.perf_counter() - start:.0f} s to {folder}")
        status = 0
        for name, check in (("mapped", True), ("read", False)):
            print(f"{name}: offset {0 if name == 'mapped' else PAD}")
            status |= subprocess.run([sys.executable, __file__, "--rows", str(args.rows), "--child",
                                      os.path.join(folder, name + ".onnx"), os.path.join(folder, "table.bin"),
                                      "1" if check else "0"]).returncode
        return status
    finally:
        if not args.dir:
            shutil.rmtree(folder)


if __name__ == "__main__":
    sys.exit(main())
