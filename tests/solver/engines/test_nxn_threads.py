"""The centre steps of big cubes on worker threads (``twins._step`` with ``threads`` > 1, the
kernel ``_lines.plan_lines`` releasing the GIL): the same moves as on one thread."""

from __future__ import annotations

import numpy as np
import pytest

from solver.cube.geometry import Face
from solver.engines.nxn import _lines, centres, halves, mixed, slices, twins
from solver.engines.nxn.blocks import Pending, plan_blocks
from solver.scramble import random_state_nxn


def _centres(n: int, seed: int, threads: int) -> tuple[list[str], np.ndarray]:
    state = random_state_nxn(n, seed).flat.copy()
    targets = centres.centre_targets(state, n)
    moves = twins.first_pair(state, n, targets, threads)
    moves += twins.finish_pairs(state, n, targets, threads)
    return [str(m) for m in moves], state


@pytest.mark.parametrize(("n", "seed"), [(9, 0), (15, 1), (21, 2)])
def test_two_threads_give_the_moves_of_one(n: int, seed: int) -> None:
    """Every pair (U + D with the slice commutators, F + B with the half-turn and mixed ones,
    R + L): the searches take the kernel's outputs in the one-thread order, ties included."""
    one, state_one = _centres(n, seed, 1)
    two, state_two = _centres(n, seed, 2)
    assert one == two
    assert np.array_equal(state_one, state_two)


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("order", ["forward", "backward", "none"])
def test_a_started_batch_gives_each_jobs_own_output(threads: int, order: str) -> None:
    """The jobs started in the background (:class:`Pending`), waited for in order, in reverse
    order (the calling thread runs those no helper took) or not at all (leaving the context
    finishes them): each output is the one its job gives alone."""
    n = 15
    state = random_state_nxn(n, 5).flat.copy()
    jobs = [
        job
        for job in (
            centres.candidates_job(n, Face.U, Face.F, (0, -1)),
            twins.twin_job(n, Face.U, Face.R, (0, -1, 3, -1)),
            slices.slice_job(n, Face.U, (0, 3)),
            halves.half_job(n, Face.F, (2, 5)),
            mixed.mixed_job(n, Face.F, Face.U, (2, 5)),
            centres.candidates_job(n, Face.D, Face.L, (3, -1)),
        )
        if job is not None
    ]
    alone = [job.run(state) for job in jobs]
    indices = {"forward": range(len(jobs)), "backward": range(len(jobs) - 1, -1, -1)}
    with Pending(state, jobs, threads) as pending:
        outs = {i: pending.out(i) for i in indices.get(order, [])}
    outs = {i: pending._outs[i] for i in range(len(jobs))} if order == "none" else outs
    assert all(np.array_equal(alone[i], out) for i, out in outs.items())
    assert len(outs) == len(jobs)


def test_a_started_batch_names_a_bad_job() -> None:
    n = 9
    state = random_state_nxn(n, 1).flat.copy()
    job = centres.candidates_job(n, Face.U, Face.F, (0, -1))
    assert job is not None
    out = np.empty((job.blocks.fixed.size * (job.blocks.groups.size - 1), 5), np.int64)
    good = job._args(out)
    bad = list(good)
    bad[1] = job.blocks.src.copy()
    bad[1][0, 0, 0] = state.size  # a source outside the state
    pending = _lines.plan_start(state, [good, tuple(bad)], 2)
    _lines.plan_wait(pending, 0)
    with pytest.raises(ValueError, match="outside the state"):
        _lines.plan_wait(pending, 1)
    with pytest.raises(IndexError, match="no job 2"):
        _lines.plan_wait(pending, 2)
    with pytest.raises(ValueError, match="outside the state"):
        _lines.plan_finish(pending)
    with pytest.raises(ValueError, match="was finished"):
        _lines.plan_wait(pending, 0)
    with pytest.raises(ValueError, match=r"threads must be 1\.\.8"):
        _lines.plan_start(state, [good], 9)
    with pytest.raises(ValueError, match="out 5 per setup"):
        _lines.plan_start(state, [good, (*good[:-1], out[:-1])], 2)
    del pending
    other = job._args(np.empty_like(out))
    _lines.plan_start(state, [good, other], 2)  # freed unfinished: its destructor drains it
    assert np.array_equal(out, job.run(state))


@pytest.mark.parametrize(("raw", "want"), [("1", 1), ("2", 2), ("3", 3)])
def test_thread_count_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, raw: str, want: int
) -> None:
    monkeypatch.setenv(twins.THREADS_ENV, raw)
    assert twins.thread_count() == want


@pytest.mark.parametrize("raw", ["0", "-1", "two", ""])
def test_a_bad_thread_count_is_named(monkeypatch: pytest.MonkeyPatch, raw: str) -> None:
    monkeypatch.setenv(twins.THREADS_ENV, raw)
    with pytest.raises(ValueError, match=twins.THREADS_ENV):
        twins.thread_count()


def test_plan_blocks_is_the_jobs_kernel_call() -> None:
    n = 9
    state = random_state_nxn(n, 4).flat.copy()
    job = centres.candidates_job(n, Face.U, Face.F, (0, -1))
    assert job is not None
    assert np.array_equal(job.run(state), plan_blocks(state, n, job.blocks, job.colours))


def test_the_bench_reports_the_calling_threads_cpu_time() -> None:
    """``bench/solve_nxn.py``'s row: the calling thread's CPU time beside the process's."""
    from tests.benchload import load_bench

    bench = load_bench("solve_nxn")
    row = bench.run_size(12, 1)
    assert row["verified"] == 1
    assert 0 < row["main_cpu_ms_median"] <= row["cpu_ms_median"] + 1
