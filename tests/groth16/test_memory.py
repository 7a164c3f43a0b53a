"""The device-memory plan (groth16/memory.py): its arithmetic, item by item, against hand
figures and against what the allocators really allocate; the choice of streamed queries;
the refusal of a key that cannot fit, with its figures; a Prover that streams B2 (the
simulator's GPU path, end to end, on a tiny circuit)."""

import numpy as np
import pytest
from numba import cuda

from numba_cuzk.circuits.builtin import CIRCUITS, build, key_shape
from numba_cuzk.curve.params import G1, G2
from numba_cuzk.groth16 import memory, pairing
from numba_cuzk.groth16.memory import KeyShape, KeyTooLarge, plan_memory, plan_with
from numba_cuzk.msm import Workspace, workspace_bytes
from numba_cuzk.msm.kernels import SUM_PER
from numba_cuzk.msm.plan import make_plan
from numba_cuzk import ntt
from tests.conftest import SIMULATOR

SHAPE = KeyShape(n_vars=100, n_public=2, domain_size=128, coefficients=300)
# bit_heavy at 2^27, the PoRep partition's size (circuits.key_shape; checked against builds below)
POREP = KeyShape(n_vars=132847089, n_public=16, domain_size=1 << 27, coefficients=357455681)


def test_query_bytes_per_query():
    assert {q: memory.query_bytes(SHAPE, q) for q in memory.QUERIES} == {
        "a": 100 * 96, "b1": 100 * 96, "b2": 100 * 192, "c": 97 * 96, "h": 128 * 96}
    # the figures at 2^27: A, B1, C ~12.75 GB each, B2 ~25.5 GB, H ~12.9 GB
    assert memory.query_bytes(POREP, "b2") == 132847089 * 192 == 25_506_641_088
    assert memory.query_bytes(POREP, "h") == (1 << 27) * 96


def test_items_of_a_small_plan():
    plan = plan_with(SHAPE, (), slots=2)
    items = {i.name: i.nbytes for i in plan.items}
    assert items["A and B as CSR (300 coefficients)"] == 300 * 36 + 2 * 8 * 129
    assert items["a, b, c and the NTT scratch vector (4 x 32 n)"] == 4 * 32 * 128
    assert items["2 witness slot(s) (32 x 100)"] == 2 * 32 * 100
    assert plan.msm_plans["G1"] == make_plan(128)  # H's 128 scalars: the largest G1 MSM
    assert plan.msm_plans["G2"] == make_plan(100)
    assert plan.bytes_of("workspace") == (workspace_bytes(G1, make_plan(128), host_scalars=False)
                                          + workspace_bytes(G2, make_plan(100), host_scalars=False))
    assert plan.pinned_bytes == 2 * 32 * 100
    assert plan.device_bytes == sum(i.nbytes for i in plan.items)


def test_workspace_bytes_by_hand_and_as_allocated():
    """c = 4 over 1000 scalars: 64 windows of 8 buckets, chunks of 128 (mean bucket 125)."""
    plan = make_plan(1000, window=4)
    w, b, chunks = 64, 8, -(-1000 // 128) + 8
    assert (plan.windows, plan.buckets, plan.chunk, plan.max_chunks) == (w, b, 128, chunks)
    ints = 4 * (w * b + w * (b + 1) + w * b + w * (b + 1) + w * chunks)  # counts, offsets, cursors, chunk offsets
    # points: chunk sums, 0/1 sums, one segment per window, 3 reduce slots each, two level regions
    # window 0's first level: 16 + 1 points in ceil(17 / SUM_PER) sums; the others' 1 point, 1 sum
    slots = w * chunks + 16 + w + 3 * w + 2 * (-(-17 // SUM_PER) + (w - 1))
    want = 1000 + ints + 4 * w * 1000 + 4 * 48 * slots
    assert workspace_bytes(G1, plan, host_scalars=False) == want
    assert workspace_bytes(G1, plan) == want + 32 * 1000
    ws = Workspace(G1, plan, host_scalars=False)
    allocated = sum(getattr(ws, name).nbytes for name in ("kinds", "counts", "offsets", "cursors", "chunk_offsets",
                                                          "chunk_buckets", "entries", "points"))
    assert allocated == want and ws.scalars is None


def test_ntt_tables_as_built():
    """The plan's NTT tables against ntt's caches after the prover's transforms at 2^9
    (two passes: one twiddle table of 2^9 entries, the coset table)."""
    ntt.clear_cache()
    log_n = 9
    values = cuda.to_device(np.zeros((8, 1 << log_n), dtype=np.uint32))
    scratch = cuda.device_array((8, 1 << log_n), dtype=np.uint32)
    ntt.intt(values, workspace=scratch)
    ntt.coset_ntt(values, 7, workspace=scratch)
    built = ntt.cached_bytes()  # tables and workspaces, not the few small constants
    ntt.clear_cache()
    assert built == 32 * (2 * (1 << log_n) + 1)  # twiddles, coset, the first pass's 1-entry stub
    assert 0 <= memory.ntt_table_bytes(log_n) - built <= memory.NTT_CONSTANT_BYTES


def test_everything_resident_when_it_fits():
    plan = plan_memory(SHAPE, 10**12)
    assert plan.streamed == () and plan.resident == tuple(memory.QUERIES)
    assert plan_memory(SHAPE, None).device_bytes == plan.device_bytes


def test_b2_streams_first_then_h():
    shape = KeyShape(n_vars=10000, n_public=2, domain_size=16384, coefficients=30000)
    resident = plan_with(shape, ())
    one = plan_memory(shape, resident.device_bytes - 1, chunk=1024)
    assert one.streamed == ("b2",)
    assert one.msm_plans["G2"] == make_plan(1024)  # the G2 workspace serves one chunk
    assert one.parts("b2") == 10 and one.parts("a") == 1
    (stream,) = [i for i in one.items if i.group == "stream"]
    assert (stream.name, stream.nbytes, stream.pinned_bytes) == ("b2 (G2): 2 buffers of 1024 points",
                                                                 2 * 1024 * 192, 10000 * 192)
    two = plan_memory(shape, one.device_bytes - 1, chunk=1024)
    assert two.streamed == ("b2", "h")
    assert two.device_bytes <= one.device_bytes - 1


def test_porep_partition_fits_an_h200_with_b2_streamed():
    """2^27 with 3 slots (the engine's two GPU workers): 178 GB resident, so B2 streams,
    and the rest fits what an H200 has free (139.8 GiB ~ 150 GB, say 148 GB free), in
    chunks of 2^24; 1 byte less and the chunks halve."""
    free = 148 * 10**9
    resident = plan_with(POREP, (), slots=3)
    assert resident.device_bytes > free
    plan = plan_memory(POREP, free, slots=3)
    assert plan.streamed == ("b2",) and plan.chunk == 1 << 24  # the largest chunk that fits
    assert plan.device_bytes <= free
    assert plan_memory(POREP, plan.device_bytes - 1, slots=3).chunk == 1 << 23
    assert plan.pinned_bytes == 25_506_641_088 + 3 * 32 * 132847089


def test_a_key_that_cannot_fit_is_refused_with_its_figures():
    everything = plan_with(SHAPE, memory.STREAM_ORDER)
    resident = plan_with(SHAPE, ())
    free = everything.device_bytes - 1
    with pytest.raises(KeyTooLarge) as refused:
        plan_memory(SHAPE, free)
    message = str(refused.value)
    assert f"needs {resident.device_bytes / 1e9:.2f} GB of device memory with every query resident" in message
    assert f"{everything.device_bytes / 1e9:.2f} GB with every query streamed" in message
    assert f"but {free / 1e9:.2f} GB is free" in message
    assert isinstance(refused.value, ValueError)


def test_bad_plans_are_refused():
    with pytest.raises(ValueError, match="unknown queries"):
        plan_with(SHAPE, ("b3",))
    with pytest.raises(ValueError, match="slots and chunk"):
        plan_with(SHAPE, (), slots=0)


@pytest.mark.parametrize("name", CIRCUITS)
def test_key_shape_matches_a_build(name):
    log_n = 12
    r1cs, _ = build(name, log_n)
    assert key_shape(name, log_n) == KeyShape(r1cs.n_wires, r1cs.n_public, 1 << log_n,
                                              r1cs.a.nnz + r1cs.b.nnz + r1cs.n_public + 1)


def test_describe_names_every_item():
    text = plan_memory(SHAPE, 10**12).describe()
    assert "query b2 (G2, 100 points)" in text and "every query resident" in text and "device memory free" in text
    assert plan_with(SHAPE, ("b2",), chunk=16).as_dict()["streamed"] == ["b2"]


@pytest.fixture(scope="module")
def cube_key():
    from numba_cuzk.groth16.setup import setup
    from tests.groth16.test_prove import TOXIC, cube_circuit

    r1cs, witness = cube_circuit()
    return r1cs, witness, setup(r1cs, gpu=False, toxic=TOXIC)


def test_key_shape_of_a_key(cube_key):
    r1cs, _, pk = cube_key
    assert KeyShape.of(pk) == KeyShape(r1cs.n_wires, r1cs.n_public, pk.domain_size,
                                       r1cs.a.nnz + r1cs.b.nnz + r1cs.n_public + 1)


def test_zkey_shape_from_its_headers(cube_key, tmp_path):
    from numba_cuzk.groth16.formats import read_shape, write_zkey

    _, _, pk = cube_key
    write_zkey(tmp_path / "cube.zkey", pk)
    assert read_shape(tmp_path / "cube.zkey") == KeyShape.of(pk)
    (tmp_path / "bad.zkey").write_bytes(b"zkey" + bytes(8))
    with pytest.raises(ValueError, match="zkey"):
        read_shape(tmp_path / "bad.zkey")


@pytest.mark.gpu
def test_an_untrusted_streamed_query_is_checked():
    """An untrusted key's streamed B2 is checked in the key's own host memory by the bulk
    check (the stream's copy is point-major pinned memory, which the CPU kernels do not
    read): a point off the curve is refused by index."""
    import dataclasses

    from numba_cuzk.circuits import build
    from numba_cuzk.groth16.formats.points import BULK_CHECK_MIN
    from numba_cuzk.groth16.prove import Prover
    from numba_cuzk.groth16.setup import setup
    from tests.groth16.test_prove import TOXIC

    r1cs, _ = build("mimc", 9)
    pk = setup(r1cs, gpu=False, toxic=TOXIC)
    assert pk.n_vars >= BULK_CHECK_MIN  # the bulk kernels, not the reference's loop
    bad = pk.b_g2.copy()
    bad[0, 3] ^= 1  # point 3's x: off the curve
    untrusted = dataclasses.replace(pk, b_g2=bad, unchecked={"b_g2": "key.zkey: section 7 (B2)"})
    budget = plan_with(KeyShape.of(pk), ("b2",), chunk=2).device_bytes
    with pytest.raises(ValueError, match="section 7 \\(B2\\): point 3: "):
        Prover(untrusted, gpu=True, memory_budget=budget, chunk=2, streamed=("b2",))
    good = dataclasses.replace(pk, unchecked={"b_g2": "key.zkey: section 7 (B2)"})
    assert Prover(good, gpu=True, memory_budget=budget, chunk=2, streamed=("b2",)).memory.streamed == ("b2",)


@pytest.mark.gpu
def test_prover_streams_b2_under_a_small_budget(cube_key):
    """The GPU path (the simulator in CI) with B2 streamed (forced: at this size streaming
    saves nothing) in 3 chunks of 2 points, within a budget of exactly its plan; the proof
    verifies and each MSM equals the CPU backend's."""
    from numba_cuzk.groth16.prove import Prover
    from numba_cuzk.groth16.timing import PhaseTimer
    from numba_cuzk.msm import to_point

    _, witness, pk = cube_key
    budget = plan_with(KeyShape.of(pk), ("b2",), chunk=2).device_bytes
    with pytest.raises(KeyTooLarge, match="with b2 streamed from pinned host memory, but 0.00 GB is free"):
        Prover(pk, gpu=True, memory_budget=1000, chunk=2, streamed=("b2",))
    prover = Prover(pk, gpu=True, memory_budget=budget, chunk=2, streamed=("b2",))
    assert prover.memory.streamed == ("b2",) and prover.memory.parts("b2") == 3
    timer = PhaseTimer(prover.stream)
    proof = prover.prove(witness, timer=timer)
    assert pairing.verify(pk.verifying_key, prover.public_inputs(witness), proof)
    if not SIMULATOR:  # the simulator's events have no times
        assert "stream_b2" in timer.durations_ms()
    cpu = Prover(pk, gpu=False)
    for p in (prover, cpu):
        p.slots[0].load(witness, p.stream, PhaseTimer(p.stream))
    on_gpu = prover.device_work(prover.slots[0], PhaseTimer(prover.stream))
    on_cpu = cpu.device_work(cpu.slots[0], PhaseTimer())
    assert {k: to_point(v) for k, v in on_gpu.items()} == {k: to_point(v) for k, v in on_cpu.items()}


def test_info_plan_command(tmp_path):
    """``numba-cuzk info --plan``: a built-in circuit's plan for a given free memory, and
    the refusal (exit 1, the figures on stderr)."""
    from typer.testing import CliRunner

    from numba_cuzk.cli import app

    runner = CliRunner()
    fits = runner.invoke(app, ["info", "--plan", "--circuit", "bit_heavy", "-k", "27", "--slots", "3",
                               "--free-gb", "148"])
    assert fits.exit_code == 0, fits.output
    assert "streamed from pinned host memory: b2" in fits.output and "query a (G1, 132847089 points)" in fits.output
    refused = runner.invoke(app, ["info", "--plan", "-k", "27", "--free-gb", "40"])
    assert refused.exit_code == 1
    need = plan_with(POREP, ()).device_bytes / 1e9
    assert f"needs {need:.2f} GB" in refused.output and "but 40.00 GB is free" in refused.output


@pytest.mark.gpu
@pytest.mark.alone  # used_bytes is every process's: another test's allocations would count as this Prover's
@pytest.mark.skipif(SIMULATOR, reason="2^20: the H200 only")
def test_prover_at_log20_under_a_budget_that_leaves_b2_out():
    """bit_heavy 2^20 with a budget 1 byte short of the resident plan: B2 streams in 4
    chunks of 2^18 on the copy stream; the proofs verify, the streamed prover's MSMs equal
    the resident one's, and the device memory it took stays within its plan."""
    from numba_cuzk.groth16.prove import Prover
    from numba_cuzk.groth16.setup import setup
    from numba_cuzk.groth16.timing import PhaseTimer
    from numba_cuzk.msm import to_point

    r1cs, witness = build("bit_heavy", 20, seed=3)
    pk = setup(r1cs, gpu=True)
    resident = Prover(pk, gpu=True)
    assert resident.memory.streamed == ()
    budget = plan_with(KeyShape.of(pk), ()).device_bytes - 1
    before = memory.used_bytes()
    streamed = Prover(pk, gpu=True, memory_budget=budget, chunk=1 << 18)
    assert streamed.memory.streamed == ("b2",) and streamed.memory.parts("b2") == 4
    timer = PhaseTimer(streamed.stream)
    for prover in (streamed, resident):
        assert pairing.verify(pk.verifying_key, prover.public_inputs(witness), prover.prove(witness))
    proof = streamed.prove(witness, timer=timer)
    assert pairing.verify(pk.verifying_key, streamed.public_inputs(witness), proof)
    assert timer.durations_ms()["stream_b2"] > 0
    assert memory.used_bytes() - before <= streamed.memory.device_bytes
    for prover in (streamed, resident):
        prover.slots[0].load(witness, prover.stream, PhaseTimer(prover.stream))
    got = streamed.device_work(streamed.slots[0], PhaseTimer(streamed.stream))
    want = resident.device_work(resident.slots[0], PhaseTimer(resident.stream))
    assert {k: to_point(v) for k, v in got.items()} == {k: to_point(v) for k, v in want.items()}


def test_placed_queries_count_as_allocated_and_never_stream():
    big = KeyShape(1 << 20, 2, 1 << 20, 1 << 22)
    placed = ("a", "b1", "c", "h")
    resident = plan_with(big, (), placed=placed)
    to_allocate = resident.device_bytes - resident.placed_bytes
    assert resident.placed_bytes == sum(memory.query_bytes(big, q) for q in placed)
    assert plan_memory(big, to_allocate, placed=placed).streamed == ()
    # one byte less: B2 streams; then H would, but it is on the device already
    assert plan_memory(big, to_allocate - 1, placed=placed).streamed == ("b2",)
    everything = plan_with(big, ("b2",), chunk=memory.STREAM_CHUNKS[-1], placed=placed)
    with pytest.raises(KeyTooLarge, match=r"with b2 streamed from pinned host memory, but .* GB is free beside the "
                                          r"0.40 GB of a, b1, c, h already there"):
        plan_memory(big, everything.device_bytes - everything.placed_bytes - 1, placed=placed)
    with pytest.raises(ValueError, match="on the device already"):
        plan_with(big, ("b2",), placed=("b2",))
    assert "(a, b1, c, h already on the device)" in plan_memory(big, 10**12, placed=placed).describe()


@pytest.mark.gpu
def test_resident_setup_leaves_the_queries_where_the_prover_uses_them(tmp_path):
    """setup(resident=True) on the GPU path (the simulator in CI): the queries are device
    arrays, except B2, streamed (forced, as at this size streaming saves nothing), which
    goes to pinned host memory; the key equals the CPU setup's with the same toxic waste
    (its zkey bytes), and a Prover adopts the device queries (no upload) and proves."""
    from numba_cuzk.curve.point_major import is_point_major
    from numba_cuzk.field.target import is_device_array
    from numba_cuzk.groth16.formats import write_zkey
    from numba_cuzk.groth16.prove import Prover
    from numba_cuzk.groth16.setup import setup
    from tests.groth16.test_prove import TOXIC, cube_circuit

    r1cs, witness = cube_circuit()
    host = setup(r1cs, gpu=False, toxic=TOXIC)
    budget = plan_with(KeyShape.of(host), ("b2",), chunk=2).device_bytes
    pk = setup(r1cs, gpu=True, toxic=TOXIC, resident=True, memory_budget=budget, chunk=2, streamed=("b2",))
    on_device = {q: is_device_array(getattr(pk, field)) for q, (field, _) in memory.QUERIES.items()}
    assert on_device == {"a": True, "b1": True, "b2": False, "c": True, "h": True}
    assert all(is_point_major(getattr(pk, field)) for field, _ in memory.QUERIES.values())  # as the MSM reads
    write_zkey(tmp_path / "host.zkey", host)
    write_zkey(tmp_path / "resident.zkey", pk)
    assert (tmp_path / "resident.zkey").read_bytes() == (tmp_path / "host.zkey").read_bytes()
    placed_bytes = sum(memory.query_bytes(KeyShape.of(pk), q) for q in ("a", "b1", "c", "h"))
    prover = Prover(pk, gpu=True, memory_budget=budget - placed_bytes, chunk=2, streamed=("b2",))
    assert prover.memory.placed == ("a", "b1", "c", "h") and prover.memory.streamed == ("b2",)
    assert all(prover.bases[q].points is getattr(pk, memory.QUERIES[q][0]) for q in prover.memory.placed)
    assert pairing.verify(pk.verifying_key, prover.public_inputs(witness), prover.prove(witness))
    with pytest.raises(ValueError, match="no GPU|none here"):
        setup(r1cs, gpu=False, resident=True)


def test_resident_setup_places_the_queries_as_a_provers_plan_for_its_slots():
    """setup(resident=True, slots=k) decides where each query goes by a k-slot Prover's
    plan: a budget that holds three slots of bit_heavy 2^20 only with B2 streamed, but
    every query beside one slot, sends B2 to pinned host memory for slots=3 and keeps it
    on the device for slots=1 (the engine's Prover has gpu_workers + 1 slots). Chunks of
    n / 2 points: streaming saves less than two more slots (64 B per wire) cost."""
    from numba_cuzk.groth16.setup import _places

    shape, chunk = key_shape("bit_heavy", 20), 1 << 19
    budget = plan_with(shape, ("b2",), slots=3, chunk=chunk).device_bytes
    assert plan_with(shape, (), slots=3).device_bytes > budget >= plan_with(shape, (), slots=1).device_bytes
    places = {k: _places(shape, True, budget=budget, chunk=chunk, streamed=None, slots=k) for k in (1, 3)}
    assert places[1] == dict.fromkeys(memory.QUERIES, "device")
    assert places[3] == {**dict.fromkeys(memory.QUERIES, "device"), "b2": "pinned"}


def test_a_key_is_left_on_the_gpu_only_for_an_engine_on_gpu_0_alone(monkeypatch):
    from numba_cuzk import backend
    from numba_cuzk.engine import EngineConfig
    from numba_cuzk.commands.batch import resident_slots

    monkeypatch.setattr(backend, "cuda_available", lambda: True)
    gpus = [{"id": 0}]
    monkeypatch.setattr(backend, "describe_devices", lambda: gpus)
    assert resident_slots(EngineConfig(gpu_workers_per_device=2)) == 3
    assert resident_slots(EngineConfig(devices=(0,), gpu_workers_per_device=1)) == 2
    assert resident_slots(EngineConfig(devices=())) is None  # the CPU backend
    assert resident_slots(EngineConfig(devices=(1,))) is None  # setup makes the key on GPU 0
    gpus.append({"id": 1})
    assert resident_slots(EngineConfig()) is None  # every visible GPU: host keys
    assert resident_slots(EngineConfig(devices=(0,))) == 3
    monkeypatch.setattr(backend, "cuda_available", lambda: False)
    assert resident_slots(EngineConfig(devices=(0,))) is None


def test_bit_tail_split_items_and_shapes():
    """With ``tail`` the resident witness queries take the split: its buffers and a tail
    workspace per curve are items, the G2 workspace for all wires is gone (B2 was its only
    MSM) and each split MSM's result is (2, 4L, windows) of the tail's plan."""
    from numba_cuzk.msm.bits import bit_bytes

    plan = plan_with(SHAPE, (), tail=8)
    assert plan.bits == ("a", "b1", "b2", "c") and plan.tail == 8
    assert plan.msm_plans["G1"] == make_plan(128) and plan.msm_plans["G2"] is None
    assert plan.tail_plans == {"G1": make_plan(8), "G2": make_plan(8)}
    assert plan.bytes_of("bits") == bit_bytes(100, 8)
    assert plan.bytes_of("workspace") == (workspace_bytes(G1, make_plan(128), host_scalars=False)
                                          + workspace_bytes(G1, make_plan(8), host_scalars=False)
                                          + workspace_bytes(G2, make_plan(8), host_scalars=False))
    assert memory.result_shape(plan, "b2") == (2, 4 * G2.limbs, make_plan(8).windows)
    assert memory.result_shape(plan, "h") == (4 * G1.limbs, make_plan(128).windows)
    assert plan.as_dict()["bits"] == ["a", "b1", "b2", "c"]
    # B2 streamed: its chunks keep the G2 workspace of one chunk, the split serves the rest
    streamed = plan_with(SHAPE, ("b2",), chunk=16, tail=8)
    assert streamed.bits == ("a", "b1", "c") and streamed.msm_plans["G2"] == make_plan(16)
    assert "G2" not in streamed.tail_plans
    with pytest.raises(ValueError, match="tail must be >= 1"):
        plan_with(SHAPE, (), tail=0)


def test_porep_partition_keeps_b2_resident_with_the_split():
    """2^27 on an H200 (148 GB free, one slot: bench.groth16's): without the split B2
    must stream; with a tail of 2^16 the G2 workspace for 132.8 M scalars (21.6 GB) goes,
    and every query fits resident; a card of 100 GB still streams B2 (then H), one of 40 is refused."""
    free = 148 * 10**9
    assert plan_memory(POREP, free).streamed == ("b2",)
    split = plan_memory(POREP, free, tail=1 << 16)
    assert split.streamed == () and split.bits == ("a", "b1", "b2", "c")
    full = plan_with(POREP, ())
    g2 = next(i.nbytes for i in full.items if i.name.startswith("msm G2"))
    assert not any(i.name.startswith("msm G2") for i in split.items)
    assert full.device_bytes - split.device_bytes > g2 - 2.5 * 10**9 > 17 * 10**9  # the split's own items < 2.5 GB
    smaller = plan_memory(POREP, 100 * 10**9, tail=1 << 16)
    assert smaller.streamed[0] == "b2" and "b2" not in smaller.bits and smaller.device_bytes <= 100 * 10**9
    with pytest.raises(KeyTooLarge):
        plan_memory(POREP, 40 * 10**9, tail=1 << 16)


def test_batch_affine_scratch_is_in_the_g1_workspace():
    """plan.affine (H's batch-affine accumulation) adds its wave's scratch (2^affine rows of
    a G1 point, 96 bytes) and the runs' products, inverses and links to the G1 workspace:
    at 2^27, affine = 26 is 6.4 GB more; G2's workspace and everything else unchanged."""
    plain, affine = plan_with(POREP, ("b2",)), plan_with(POREP, ("b2",), affine=26)
    items = {i.name: i.nbytes for i in plain.items}
    more = {i.name: i.nbytes for i in affine.items}
    g1 = next(name for name in items if name.startswith("msm G1"))
    plan = affine.msm_plans["G1"]
    runs = (1 << 26) // plan.chunk
    assert plan.affine == 26 and affine.msm_plans["G2"].affine is None
    assert more[g1] - items[g1] == (1 << 26) * 96 + runs * (2 * 48 + 4) + 4
    assert {k: v for k, v in more.items() if k != g1} == {k: v for k, v in items.items() if k != g1}
    assert more[g1] == workspace_bytes(G1, plan, host_scalars=False)
