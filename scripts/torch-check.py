#!/usr/bin/env python3
"""PyTorch's torch.distributed (backend nccl) under the Weft NCCL shim (docs/nccl.md, "PyTorch").

Run by scripts/gpu-check-torch.sh, which generates the algorithms and reads the logs; needs only
torch and the standard library.

  torch-check.py probe
      says which torch, CUDA device and NCCL python3 has; exit 77 when one is missing
  torch-check.py single --out FILE.json [--label NAME] [--max-bytes 64M]
      one process, world size 1, under whatever LD_PRELOAD and WEFT_* the caller set:
      all_reduce, all_gather_into_tensor, reduce_scatter_tensor, all_to_all_single and broadcast
      on float32, bfloat16 and int32, 1 KB to --max-bytes (factor 8); every result is compared
      with the input (at world size 1 each of them is a copy); checksums go to FILE.json
  torch-check.py compare A.json B.json
      the checksums of two single runs (with and without Weft) must be equal
  torch-check.py standalone --shim LIB --algos DIR --logs DIR [--nprocs 4] [--max-bytes 4M]
                            [--steps 50] [--timeout 170]
      starts --nprocs processes on GPU 0 with WEFT_STANDALONE=1 and LD_PRELOAD=LIB in their
      environment (set before python starts, so before torch loads NCCL); each runs the same
      collectives against values computed on the CPU, barrier, all_reduce max, 50 steps of
      DistributedDataParallel on its shard of a fixed synthetic data set, one call that has no
      algorithm (reduce: it must fail with the shim's message), an all_reduce on a new_group
      (right, or ncclCommSplit refused with the shim's message), then all_to_all_single. The
      losses are compared with one process training the same model on the whole batch (rtol 1e-4)
  torch-check.py worker ...
      one of those processes (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT from the environment)

Results are printed as "CHECK|name|PASS|detail" or "CHECK|name|FAIL|detail" lines, which the shell
script reports; the exit status is 0 only when every check passed, 77 when python3 has no torch,
no CUDA device or no NCCL.
"""

import argparse
import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import time
import traceback
from datetime import timedelta

SKIP = 77
DTYPES = ("float32", "bfloat16", "int32")
KINDS = ("all_reduce", "all_gather_into_tensor", "reduce_scatter_tensor", "all_to_all_single",
         "broadcast")
SENTINEL = -7  # what an output holds before the call; no input value is negative

# The model and data of the training check: every process builds them from these seeds alone.
MODEL_SEED = 1234
DATA_SEED = 4321
IN_FEATURES, HIDDEN, OUT_FEATURES = 32, 64, 8
BATCH_PER_RANK = 16
LEARNING_RATE = 0.05
LOSS_RTOL = 1e-4
PARAM_RTOL, PARAM_ATOL = 1e-4, 1e-5


def say(*parts):
    print(*parts, flush=True)


def check(name, ok, detail=""):
    say("CHECK|{}|{}|{}".format(name, "PASS" if ok else "FAIL", detail))
    return ok


def parse_bytes(text):
    units = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    m = re.fullmatch(r"(\d+)([KMG]?)B?", text.strip().upper())
    if not m:
        raise argparse.ArgumentTypeError("'{}' is not a size like 4M".format(text))
    return int(m.group(1)) * units[m.group(2)]


def sizes_up_to(max_bytes):
    sizes = []
    size = 1024
    while size <= max_bytes:
        sizes.append(size)
        size *= 8
    if sizes and sizes[-1] != max_bytes and max_bytes % 1024 == 0:
        sizes.append(max_bytes)
    return sizes


def free_port():
    for _ in range(100):
        port = random.randint(20000, 40000)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free TCP port in 20000-40000 on 127.0.0.1")


def import_torch(need_gpu=True):
    """torch and torch.distributed, or exit 77 with the reason."""
    try:
        import torch
        import torch.distributed as dist
    except Exception as e:  # ImportError, or a torch that fails to load
        say("torch-check: skipped: {} cannot import torch ({}: {})".format(
            sys.executable, type(e).__name__, e))
        sys.exit(SKIP)
    if not dist.is_available() or not dist.is_nccl_available():
        say("torch-check: skipped: torch {} has no NCCL backend".format(torch.__version__))
        sys.exit(SKIP)
    if need_gpu and not torch.cuda.is_available():
        say("torch-check: skipped: torch {} sees no CUDA device".format(torch.__version__))
        sys.exit(SKIP)
    return torch, dist


def elem_size(torch, dtype):
    return torch.empty((), dtype=dtype).element_size()


def checksum(torch, t):
    """Two integers that change with any bit of t: a position-weighted and a plain sum of its
    16-bit words, computed on the device."""
    words = t.contiguous().reshape(-1).view(torch.int16).to(torch.int64) & 0xFFFF
    weights = torch.arange(words.numel(), device=t.device, dtype=torch.int64) % 65521 + 1
    return [int((words * weights).sum().item()), int(words.sum().item())]


# ---- the collectives --------------------------------------------------------------------------
# Inputs are small integers, exact in bfloat16 and in every sum of four of them, so results can
# be compared exactly whatever order a reduction takes.

def fill_g(torch, rank, idx):
    return idx % 13 + rank + 1          # at most 17; a sum over 4 ranks at most 68


def fill_f(torch, rank, idx):
    return (rank * 37 + idx * 7) % 251  # all_to_all: tells blocks and ranks apart


def reference(torch, kind, rank, world, n, root, op="sum"):
    """(this rank's input, the expected output), int64 on the CPU. n: elements of the input."""
    idx = torch.arange(n, dtype=torch.int64)
    block = n // world
    if kind == "all_to_all_single":
        inp = fill_f(torch, rank, idx)
        expected = torch.cat([fill_f(torch, s, idx)[rank * block:(rank + 1) * block]
                              for s in range(world)])
        return inp, expected
    inp = fill_g(torch, rank, idx)
    if kind == "all_reduce":
        parts = [fill_g(torch, s, idx) for s in range(world)]
        if op == "max":
            return inp, torch.stack(parts).max(dim=0).values
        return inp, sum(parts)
    if kind == "all_gather_into_tensor":
        return inp, torch.cat([fill_g(torch, s, idx) for s in range(world)])
    if kind == "reduce_scatter_tensor":
        total = sum(fill_g(torch, s, idx) for s in range(world))
        return inp, total[rank * block:(rank + 1) * block]
    if kind == "broadcast":
        return inp, fill_g(torch, root, idx)
    raise ValueError(kind)


def run_collective(torch, dist, kind, x, world, root=0, op=None):
    """Makes the call on device tensor x (this rank's input) and returns the output tensor."""
    n = x.numel()
    dev = x.device
    if kind == "all_reduce":
        t = x.clone()
        if op is None:
            dist.all_reduce(t)
        else:
            dist.all_reduce(t, op=op)
        return t
    if kind == "all_gather_into_tensor":
        out = torch.full((n * world,), SENTINEL, dtype=x.dtype, device=dev)
        dist.all_gather_into_tensor(out, x)
        return out
    if kind == "reduce_scatter_tensor":
        out = torch.full((n // world,), SENTINEL, dtype=x.dtype, device=dev)
        dist.reduce_scatter_tensor(out, x)
        return out
    if kind == "all_to_all_single":
        out = torch.full((n,), SENTINEL, dtype=x.dtype, device=dev)
        dist.all_to_all_single(out, x)
        return out
    if kind == "broadcast":
        t = x.clone()
        dist.broadcast(t, src=root)
        return t
    raise ValueError(kind)


# ---- probe ------------------------------------------------------------------------------------

def cmd_probe(args):
    torch, dist = import_torch()
    try:
        nccl = ".".join(str(v) for v in torch.cuda.nccl.version())
    except Exception as e:  # informative only
        nccl = "unknown ({})".format(e)
    say("torch-check: torch {} (CUDA {}), NCCL {}, {} CUDA device(s), device 0: {}".format(
        torch.__version__, torch.version.cuda, nccl, torch.cuda.device_count(),
        torch.cuda.get_device_name(0)))
    return 0


# ---- one process, world size 1 ----------------------------------------------------------------

def cmd_single(args):
    torch, dist = import_torch()
    torch.cuda.set_device(0)
    dev = torch.device("cuda", 0)
    port = free_port()
    started = time.monotonic()
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:{}".format(port), rank=0,
                            world_size=1, timeout=timedelta(seconds=args.pg_timeout))
    try:
        nccl = list(torch.cuda.nccl.version())
    except Exception:
        nccl = None
    results = {}
    failures = []
    calls = 0
    sizes = sizes_up_to(args.max_bytes)
    for dtype_name in DTYPES:
        dtype = getattr(torch, dtype_name)
        for nbytes in sizes:
            n = nbytes // elem_size(torch, dtype)
            idx = torch.arange(n, device=dev, dtype=torch.int64)
            for kind in KINDS:
                fill = fill_f if kind == "all_to_all_single" else fill_g
                x = fill(torch, 0, idx).to(dtype)
                out = run_collective(torch, dist, kind, x, 1)
                calls += 1
                key = "{}/{}/{}".format(kind, dtype_name, nbytes)
                results[key] = checksum(torch, out)
                if not torch.equal(out, x):  # at world size 1 each collective is a copy
                    failures.append(key)
    torch.cuda.synchronize()
    dist.destroy_process_group()
    seconds = time.monotonic() - started
    with open(args.out, "w") as f:
        json.dump({"label": args.label, "torch": torch.__version__, "nccl": nccl,
                   "calls": calls, "failures": failures, "results": results}, f, indent=1)
    say("torch-check: {} calls ({} kinds x {} types x {} sizes, 1 KB to {} bytes) in {:.1f} s"
        .format(calls, len(KINDS), len(DTYPES), len(sizes), sizes[-1], seconds))
    ok = check("1 process ({}): results equal the input".format(args.label), not failures,
               "{} calls".format(calls) if not failures
               else "{} of {} wrong: {}".format(len(failures), calls, ", ".join(failures[:8])))
    return 0 if ok else 1


def cmd_compare(args):
    with open(args.a) as f:
        a = json.load(f)
    with open(args.b) as f:
        b = json.load(f)
    name = "1 process: {} and {} results are equal".format(a.get("label"), b.get("label"))
    if set(a["results"]) != set(b["results"]):
        return 0 if check(name, False, "the runs made different calls") else 1
    differ = sorted(k for k in a["results"] if a["results"][k] != b["results"][k])
    ok = check(name, not differ and len(a["results"]) > 0,
               "{} checksums".format(len(a["results"])) if not differ
               else "{} differ: {}".format(len(differ), ", ".join(differ[:8])))
    return 0 if ok else 1


# ---- the training --------------------------------------------------------------------------------

def make_model(torch):
    torch.manual_seed(MODEL_SEED)
    nn = torch.nn
    return nn.Sequential(nn.Linear(IN_FEATURES, HIDDEN), nn.Tanh(), nn.Linear(HIDDEN, OUT_FEATURES))


def make_data(torch, steps, batch):
    """Elementwise targets only, so every process computes identical data on the CPU."""
    g = torch.Generator().manual_seed(DATA_SEED)
    x = torch.randn(steps, batch, IN_FEATURES, generator=g)
    y = torch.tanh(1.5 * x[..., :OUT_FEATURES] - 0.5 * x[..., OUT_FEATURES:2 * OUT_FEATURES])
    return x, y


def exact_float32(torch):
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False


def train_reference(torch, steps, world):
    """One process, no DDP, the whole batch (the concatenation of the shards) each step."""
    exact_float32(torch)
    dev = torch.device("cuda", 0)
    model = make_model(torch).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=LEARNING_RATE)
    x_all, y_all = make_data(torch, steps, world * BATCH_PER_RANK)
    losses = []
    for step in range(steps):
        x, y = x_all[step].to(dev), y_all[step].to(dev)
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    params = torch.cat([p.detach().reshape(-1) for p in model.parameters()]).cpu().tolist()
    return torch.stack(losses).cpu().tolist(), params


# ---- one standalone process ------------------------------------------------------------------

def cmd_worker(args):
    torch, dist = import_torch()
    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    result = {"rank": rank, "world": world, "phases": {}, "failures": [], "calls": 0}

    def save():
        tmp = args.result + ".tmp"
        with open(tmp, "w") as f:
            json.dump(result, f, indent=1)
        os.replace(tmp, args.result)

    def phase_done(name, since):
        result["phases"][name] = round(time.monotonic() - since, 2)
        say("torch-check: rank {}: {} done in {:.1f} s".format(rank, name, result["phases"][name]))
        save()

    torch.cuda.set_device(0)  # every rank on GPU 0: what standalone mode is for
    dev = torch.device("cuda", 0)
    exact_float32(torch)
    save()
    try:
        t0 = time.monotonic()
        dist.init_process_group("nccl", init_method="env://", rank=rank, world_size=world,
                                timeout=timedelta(seconds=args.pg_timeout))
        phase_done("init_process_group", t0)

        # Collectives (all_to_all_single comes last, see below) against the CPU.
        t0 = time.monotonic()
        sizes = sizes_up_to(args.max_bytes)
        for dtype_name in DTYPES:
            dtype = getattr(torch, dtype_name)
            for k, nbytes in enumerate(sizes):
                n = nbytes // elem_size(torch, dtype)
                for kind in ("all_reduce", "all_gather_into_tensor", "reduce_scatter_tensor",
                             "broadcast"):
                    root = k % world
                    inp, expected = reference(torch, kind, rank, world, n, root)
                    out = run_collective(torch, dist, kind, inp.to(dtype).to(dev), world, root)
                    result["calls"] += 1
                    if not torch.equal(out.cpu(), expected.to(dtype)):
                        result["failures"].append("{}/{}/{}{}".format(
                            kind, dtype_name, nbytes,
                            "/root{}".format(root) if kind == "broadcast" else ""))
        # A barrier (an all_reduce of one float) and a max.
        dist.barrier()
        n = 64 * 1024 // 4
        inp, expected = reference(torch, "all_reduce", rank, world, n, 0, op="max")
        out = run_collective(torch, dist, "all_reduce", inp.to(torch.float32).to(dev), world,
                             op=dist.ReduceOp.MAX)
        result["calls"] += 2
        if not torch.equal(out.cpu(), expected.to(torch.float32)):
            result["failures"].append("all_reduce/float32/65536/max")
        torch.cuda.synchronize()
        phase_done("collectives", t0)

        # DistributedDataParallel, each rank its shard; the loss averaged over ranks each step.
        t0 = time.monotonic()
        from torch.nn.parallel import DistributedDataParallel as DDP
        model = make_model(torch).to(dev)
        ddp = DDP(model, device_ids=[0])
        opt = torch.optim.SGD(ddp.parameters(), lr=LEARNING_RATE)
        x_all, y_all = make_data(torch, args.steps, world * BATCH_PER_RANK)
        shard = slice(rank * BATCH_PER_RANK, (rank + 1) * BATCH_PER_RANK)
        losses = []
        for step in range(args.steps):
            x, y = x_all[step, shard].to(dev), y_all[step, shard].to(dev)
            opt.zero_grad(set_to_none=True)
            loss = torch.nn.functional.mse_loss(ddp(x), y)
            loss.backward()
            opt.step()
            total = loss.detach().clone()
            dist.all_reduce(total)
            losses.append(total)
        result["losses"] = (torch.stack(losses) / world).cpu().tolist()
        result["params"] = torch.cat(
            [p.detach().reshape(-1) for p in model.parameters()]).cpu().tolist()
        phase_done("ddp", t0)

        # A call no loaded algorithm serves (reduce): standalone mode must refuse it with its
        # message, as a Python exception, and the process group must stay usable.
        t0 = time.monotonic()
        t = torch.ones(1024, device=dev)
        try:
            dist.reduce(t, dst=0)
            torch.cuda.synchronize()
            result["probe"] = {"refused": False}
        except Exception as e:
            result["probe"] = {"refused": True, "type": type(e).__name__, "message": str(e)[-4000:]}
        phase_done("refusal probe", t0)

        # A subgroup once the default group has a communicator on the device: ProcessGroupNCCL
        # makes its communicator with ncclCommSplit, which standalone mode does not serve; or,
        # if it does not split, the all_reduce must be right.
        t0 = time.monotonic()
        sub = {"refused": None, "right": None}
        result["subgroup"] = sub
        try:
            group = dist.new_group(list(range(world)))
            t = torch.full((1024,), float(rank + 1), device=dev)
            dist.all_reduce(t, group=group)
            sub["right"] = bool(torch.equal(t.cpu(), torch.full((1024,), float(
                world * (world + 1) // 2))))
        except Exception as e:
            sub["refused"] = {"type": type(e).__name__, "message": str(e)[-4000:]}
        phase_done("subgroup probe", t0)

        # all_to_all_single last: if PyTorch made it of ncclSend/ncclRecv in a group (PyTorch
        # built against NCCL < 2.28), standalone mode refuses the first ncclSend, PyTorch leaves
        # the group open, and nothing after it on this thread would run.
        t0 = time.monotonic()
        a2a = {"calls": 0, "failures": [], "refused": None}
        result["alltoall"] = a2a
        try:
            for dtype_name in DTYPES:
                dtype = getattr(torch, dtype_name)
                for nbytes in sizes:
                    n = nbytes // elem_size(torch, dtype)
                    inp, expected = reference(torch, "all_to_all_single", rank, world, n, 0)
                    out = run_collective(torch, dist, "all_to_all_single", inp.to(dtype).to(dev),
                                         world)
                    a2a["calls"] += 1
                    if not torch.equal(out.cpu(), expected.to(dtype)):
                        a2a["failures"].append("all_to_all_single/{}/{}".format(dtype_name, nbytes))
        except Exception as e:
            a2a["refused"] = {"type": type(e).__name__, "message": str(e)[-4000:]}
        phase_done("all_to_all_single", t0)

        if a2a["refused"] is None:
            t0 = time.monotonic()
            dist.destroy_process_group()
            phase_done("destroy_process_group", t0)
        result["done"] = True
        save()
    except Exception as e:
        result["error"] = "{}: {}".format(type(e).__name__, e)[-4000:]
        save()
        traceback.print_exc()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(1)  # leave at once: the peers wait for this rank; the launcher stops them
    sys.stdout.flush()
    sys.stderr.flush()
    # A refused ncclSend left PyTorch's group open in the shim: skip the interpreter's teardown.
    os._exit(0)


# ---- the standalone launcher -------------------------------------------------------------------

WEFT_LINE = re.compile(r"WEFT INFO (nccl\w+): .* -> Weft '")
NCCL_LINE = re.compile(r"WEFT INFO (nccl\w+): .* -> NCCL: ")
REFUSAL = re.compile(r"WEFT WARN (.*(standalone mode has no NCCL to fall back to|"
                     r"is not available in standalone mode).*)")


def read_log(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def within(a, b, rtol, atol):
    return abs(a - b) <= atol + rtol * abs(b)


def cmd_standalone(args):
    torch, dist = import_torch()
    os.makedirs(args.logs, exist_ok=True)
    world = args.nprocs
    port = free_port()
    env = dict(os.environ)
    for name in ("WEFT_DISABLE", "WEFT_XML_FILES", "MSCCL_XML_FILES", "MSCCL_ALGO_DIR",
                 "WEFT_STANDALONE_ADDR"):
        env.pop(name, None)
    preload = os.path.abspath(args.shim)
    if env.get("LD_PRELOAD"):
        preload += ":" + env["LD_PRELOAD"]
    env.update({
        "LD_PRELOAD": preload,
        "WEFT_STANDALONE": "1",
        "WEFT_ALGO_DIR": os.path.abspath(args.algos),
        "WEFT_DEBUG": "INFO",
        "WEFT_TIMEOUT_S": env.get("WEFT_TIMEOUT_S", "60"),
        "WEFT_ARRIVAL_TIMEOUT_S": env.get("WEFT_ARRIVAL_TIMEOUT_S", "120"),
        "MASTER_ADDR": "127.0.0.1",
        "MASTER_PORT": str(port),
        "WORLD_SIZE": str(world),
        "LOCAL_WORLD_SIZE": str(world),
        "PYTHONUNBUFFERED": "1",
        "OMP_NUM_THREADS": env.get("OMP_NUM_THREADS", "2"),  # four processes share the cores
    })
    say("torch-check: {} processes on GPU 0, WEFT_STANDALONE=1, LD_PRELOAD={}, port {}, "
        "sizes to {} bytes, {} training steps".format(world, args.shim, port, args.max_bytes,
                                                      args.steps))
    procs, logs, results = [], [], []
    started = time.monotonic()
    for rank in range(world):
        renv = dict(env, RANK=str(rank), LOCAL_RANK=str(rank))
        log_path = os.path.join(args.logs, "rank{}.log".format(rank))
        result_path = os.path.join(args.logs, "rank{}.json".format(rank))
        if os.path.exists(result_path):
            os.remove(result_path)
        log = open(log_path, "w")
        cmd = [sys.executable, "-u", os.path.abspath(__file__), "worker", "--result", result_path,
               "--max-bytes", str(args.max_bytes), "--steps", str(args.steps),
               "--pg-timeout", str(args.pg_timeout)]
        procs.append(subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=renv,
                                      start_new_session=True))
        log.close()
        logs.append(log_path)
        results.append(result_path)

    # Wait for all of them, at most --timeout; once one has failed, the others get 20 s.
    deadline = started + args.timeout
    timed_out = False
    while True:
        codes = [p.poll() for p in procs]
        if all(c is not None for c in codes):
            break
        now = time.monotonic()
        if any(c not in (None, 0) for c in codes):
            deadline = min(deadline, now + 20)
        if now >= deadline:
            timed_out = True
            for p in procs:
                if p.poll() is None:
                    try:
                        os.killpg(p.pid, signal.SIGKILL)
                    except OSError:
                        pass
            for p in procs:
                try:
                    p.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    pass
            break
        time.sleep(0.5)
    codes = [p.poll() for p in procs]
    say("torch-check: processes ended after {:.1f} s, exit codes {}{}".format(
        time.monotonic() - started, codes, " (stopped at the time limit)" if timed_out else ""))

    res = []
    for path in results:
        try:
            with open(path) as f:
                res.append(json.load(f))
        except (OSError, ValueError):
            res.append({})
    for r, data in enumerate(res):
        say("torch-check: rank {} phases (s): {}{}".format(
            r, data.get("phases", {}), "; error: " + data["error"] if data.get("error") else ""))
    texts = [read_log(p) for p in logs]
    for r, code in enumerate(codes):
        if code != 0:
            say("torch-check: last lines of {}:".format(logs[r]))
            for line in texts[r].splitlines()[-15:]:
                say("    " + line[:400])
    ok_all = True
    tag = "{} processes, standalone".format(world)

    # 1. Collectives.
    have = [d for d in res if "collectives" in d.get("phases", {})]
    fails = [(d["rank"], f) for d in have for f in d.get("failures", [])]
    if len(have) != world:
        ok_all &= check(tag + ": collectives equal the CPU's values", False,
                        "{} of {} ranks got through them (logs in {})".format(len(have), world,
                                                                              args.logs))
    else:
        ok_all &= check(tag + ": collectives equal the CPU's values", not fails,
                        "{} calls per rank".format(have[0].get("calls")) if not fails
                        else "{} wrong, e.g. {}".format(len(fails), fails[:6]))

    # 2. Training: DDP's per-step losses against one process on the whole batch.
    name = tag + ": DDP, {} steps, losses of one process".format(args.steps)
    if not res or "losses" not in res[0]:
        ok_all &= check(name, False, "rank 0 did not finish the training (logs in {})".format(
            args.logs))
    else:
        try:
            ref_losses, ref_params = train_reference(torch, args.steps, world)
        except Exception as e:
            ref_losses, ref_params = None, None
            ok_all &= check(name, False, "the reference run failed: {}: {}".format(
                type(e).__name__, e))
        if ref_losses is not None:
            ddp_losses = res[0]["losses"]
            bad = [i for i, (a, b) in enumerate(zip(ddp_losses, ref_losses))
                   if not within(a, b, LOSS_RTOL, 1e-7)]
            worst = max(abs(a - b) / max(abs(b), 1e-12) for a, b in zip(ddp_losses, ref_losses))
            say("torch-check: losses, DDP on {} ranks: first {:.7f}, last {:.7f}".format(
                world, ddp_losses[0], ddp_losses[-1]))
            say("torch-check: losses, one process:     first {:.7f}, last {:.7f}".format(
                ref_losses[0], ref_losses[-1]))
            pbad = [i for i, (a, b) in enumerate(zip(res[0]["params"], ref_params))
                    if not within(a, b, PARAM_RTOL, PARAM_ATOL)]
            pworst = max(abs(a - b) for a, b in zip(res[0]["params"], ref_params))
            others = [r for r, d in enumerate(res[1:], 1)
                      if len(d.get("losses", [])) != len(ddp_losses)
                      or not all(within(a, b, LOSS_RTOL, 1e-7)
                                 for a, b in zip(d["losses"], ddp_losses))]
            ok = (len(ddp_losses) == args.steps and not bad and not pbad and not others
                  and ref_losses[-1] < ref_losses[0])
            detail = ("first {:.6f}/{:.6f}, last {:.6f}/{:.6f} (DDP/one process), largest "
                      "relative difference {:.2e} (rtol {}), parameters within {:.2e}").format(
                          ddp_losses[0], ref_losses[0], ddp_losses[-1], ref_losses[-1], worst,
                          LOSS_RTOL, pworst)
            if bad:
                detail += "; steps off: {}".format(bad[:10])
            if pbad:
                detail += "; {} parameters off".format(len(pbad))
            if others:
                detail += "; ranks with other losses: {}".format(others)
            ok_all &= check(name, ok, detail)

    # 3. The call without an algorithm: a clean exception carrying the shim's reason.
    name = tag + ": reduce (no algorithm) is refused cleanly"
    probes = [d.get("probe") for d in res]
    if any(p is None for p in probes):
        ok_all &= check(name, False, "not every rank got to it")
    else:
        shim_reason = "standalone mode has no NCCL to fall back to"
        refused = all(p["refused"] for p in probes)
        in_message = all(shim_reason in p.get("message", "") for p in probes)
        in_log = all(re.search(r"WEFT WARN ncclReduce: .*" + re.escape(shim_reason), t)
                     for t in texts)
        ok_all &= check(name, refused and in_log and (in_message or all(
            "invalid usage" in p.get("message", "") for p in probes)),
            "{} on every rank, the shim's reason {} the exception".format(
                probes[0].get("type"), "in" if in_message else "only in the log, not in")
            if refused else "the call was not refused: {}".format(probes))

    # 3b. A subgroup (new_group): served and right, or ncclCommSplit refused cleanly.
    name = tag + ": new_group after the default group"
    subs = [d.get("subgroup") for d in res]
    if any(x is None for x in subs):
        ok_all &= check(name, False, "not every rank got to it")
    elif all(x["refused"] is None for x in subs):
        ok_all &= check(name, all(x["right"] for x in subs),
                        "its all_reduce ran and is right" if all(x["right"] for x in subs)
                        else "its all_reduce is wrong")
    else:
        split = "ncclCommSplit is not available in standalone mode"
        ok = (all(x["refused"] is not None for x in subs)
              and all(split in x["refused"]["message"] for x in subs)
              and all(re.search(r"WEFT WARN " + split, t) for t in texts))
        first = next(x["refused"] for x in subs if x["refused"] is not None)
        ok_all &= check(name, ok,
                        "EXPECTED REFUSAL: PyTorch splits the default group's communicator "
                        "(ncclCommSplit), which standalone mode does not serve ({} with the "
                        "shim's reason)".format(first["type"])
                        if ok else "failed otherwise: {}".format([x["refused"] for x in subs]))

    # 4. all_to_all_single: served and right, or refused because PyTorch used ncclSend/ncclRecv.
    name = tag + ": all_to_all_single"
    a2as = [d.get("alltoall") for d in res]
    if any(a is None for a in a2as):
        ok_all &= check(name, False, "not every rank got to it")
    elif all(a["refused"] is None for a in a2as):
        fails = [f for a in a2as for f in a["failures"]]
        ok_all &= check(name, not fails and a2as[0]["calls"] > 0,
                        "{} calls per rank, equal to the CPU's values".format(a2as[0]["calls"])
                        if not fails else "wrong: {}".format(fails[:6]))
    else:
        # Refused on every rank, by the shim's ncclSend refusal (PyTorch's message then only
        # says "NCCL Error 5: invalid usage ..."; the reason is in the shim's log).
        sends = all(re.search(r"WEFT WARN ncclSend is not available in standalone mode", t)
                    for t in texts)
        ok = all(a["refused"] is not None for a in a2as) and sends
        first = next(a["refused"] for a in a2as if a["refused"] is not None)
        ok_all &= check(name, ok,
                        "EXPECTED REFUSAL: PyTorch made it of ncclSend/ncclRecv in a group, which "
                        "standalone mode does not serve ({}: {})".format(
                            first["type"], first["message"][:200])
                        if ok else "failed otherwise: {}".format([a["refused"] for a in a2as]))

    # 5. The logs: served by Weft, nothing forwarded, no refusal but the expected ones.
    counts = {}
    problems = []
    for r, t in enumerate(texts):
        served = {}
        for m in WEFT_LINE.finditer(t):
            served[m.group(1)] = served.get(m.group(1), 0) + 1
        counts[r] = served
        if "standalone mode (WEFT_STANDALONE=1)" not in t:
            problems.append("rank {}: the shim did not start in standalone mode".format(r))
        if NCCL_LINE.search(t):
            problems.append("rank {}: a call went to NCCL".format(r))
        for m in REFUSAL.finditer(t):
            line = m.group(1)
            if not line.startswith(("ncclReduce:", "ncclSend ", "ncclCommSplit ")):
                problems.append("rank {}: unexpected refusal: {}".format(r, line[:300]))
        for api in ("ncclAllReduce", "ncclAllGather", "ncclReduceScatter", "ncclBcast"):
            if served.get(api, 0) == 0:
                problems.append("rank {}: no {} served by Weft".format(r, api))
    say("torch-check: calls served by Weft per rank: {}".format(counts))
    ok_all &= check(tag + ": the shim's log shows every call on Weft", not problems,
                    "{} '-> Weft' lines on rank 0".format(sum(counts.get(0, {}).values()))
                    if not problems else "; ".join(problems[:6]))

    # 6. Every process ended by itself, with status 0.
    destroyed = all("destroy_process_group" in d.get("phases", {}) for d in res)
    ok_all &= check(tag + ": every process exits cleanly",
                    not timed_out and all(c == 0 for c in codes)
                    and all(d.get("done") for d in res),
                    "exit codes {}, destroy_process_group {}".format(
                        codes, "done" if destroyed else "skipped or not reached")
                    + (", stopped at the {:.0f} s limit".format(args.timeout) if timed_out else ""))
    return 0 if ok_all else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("probe")
    p = sub.add_parser("single")
    p.add_argument("--out", required=True)
    p.add_argument("--label", default="shim")
    p.add_argument("--max-bytes", type=parse_bytes, default=64 << 20)
    p.add_argument("--pg-timeout", type=int, default=60)
    p = sub.add_parser("compare")
    p.add_argument("a")
    p.add_argument("b")
    p = sub.add_parser("standalone")
    p.add_argument("--shim", required=True)
    p.add_argument("--algos", required=True)
    p.add_argument("--logs", required=True)
    p.add_argument("--nprocs", type=int, default=4)
    p.add_argument("--max-bytes", type=parse_bytes, default=4 << 20)
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--timeout", type=float, default=170)
    p.add_argument("--pg-timeout", type=int, default=120)
    p = sub.add_parser("worker")
    p.add_argument("--result", required=True)
    p.add_argument("--max-bytes", type=parse_bytes, required=True)
    p.add_argument("--steps", type=int, required=True)
    p.add_argument("--pg-timeout", type=int, default=120)
    args = parser.parse_args()
    handler = {"probe": cmd_probe, "single": cmd_single, "compare": cmd_compare,
               "standalone": cmd_standalone, "worker": cmd_worker}[args.command]
    sys.exit(handler(args))


if __name__ == "__main__":
    main()
