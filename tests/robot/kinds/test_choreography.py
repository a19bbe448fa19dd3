"""One-camera scan choreography: the fastest covering sequence (against an exhaustive search),
the bookkeeping of each face's in-plane turn (against a hand-worked case and a physical
replay), and the simulated scan (render → vision → model) for N = 2..5."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import numpy as np
import pytest

from robot.config import load_config
from robot.errors import PlanError
from robot.kinds import Mechanism, Turntable, TurntableTiming, TwoGripper, replay
from robot.kinds.choreography import (
    DEFAULT_CAPTURE_S,
    Choreography,
    MachineState,
    camera_grid,
    choreograph,
    default_camera,
    rotation_moves,
    turn_grid,
    view_of,
)
from robot.kinds.frames import frames, rotation
from robot.kinds.kindscan import SimulatedScanRig, TakenLook, run_scan, simulate_scan
from robot.kinds.mechanism import Action
from robot.kinds.profile import build_mechanism
from solver.cube.facelets import Cube, sequence_permutation
from solver.cube.geometry import Face
from solver.scramble import random_moves
from tests.robot.helpers import CONFIGS
from vision.calibration import StickerSite
from vision.errors import CalibrationError
from vision.render import RenderParams

MECHANISMS = {
    "cubotino": Turntable(),
    "stepper-turntable": Turntable(table_positions=None),
    "grippers-180": TwoGripper(),
    "grippers-90": TwoGripper(angles=(0, 1)),
}

SMALL = RenderParams(width=160, height=120)


def _scrambled(n: int, seed: int) -> Cube:
    return Cube.solved(n).apply(random_moves(n, seed=seed))


def _exhaustive(mechanism: Mechanism, camera: Face, capture_s: float, bound: float) -> float:
    """Least time of any sequence of free steps (captures included) after which the camera
    has seen all six faces, if below ``bound``: depth-first over every action sequence (no
    tables of the module under test), pruned by time (each unseen face needs at least one
    more step and one more frame) and by cycles on the path (a state repeated with nothing
    new seen)."""
    n = mechanism.n
    frames_ = frames(n)
    steps_of = {p: mechanism.free_steps(p) for p in mechanism.states()}
    cheapest = min(s.seconds for steps in steps_of.values() for s in steps)
    best = [bound]

    def face(o: int) -> int:
        return int(frames_.perms[o][int(camera) * n * n]) // (n * n)

    def clear(parts: tuple[int, ...]) -> bool:
        return not isinstance(mechanism, Turntable) or parts[0] == 0

    def go(
        o: int, parts: tuple[int, ...], seen: frozenset[int], t: float, path: set[object]
    ) -> None:
        if len(seen) == 6:
            best[0] = min(best[0], t)
            return
        if t + (6 - len(seen)) * (cheapest + capture_s) >= best[0] - 1e-9:
            return
        for step in steps_of[parts]:
            o2 = o if step.effect is None else int(frames_.after[o, frames_.of(step.effect)])
            t2 = t + step.seconds
            seen2 = seen
            if clear(step.after) and face(o2) not in seen:
                seen2, t2 = seen | {face(o2)}, t2 + capture_s
            state = (o2, step.after, seen2)
            if state in path:
                continue
            path.add(state)
            go(o2, step.after, seen2, t2, path)
            path.remove(state)

    parts0 = mechanism.start
    seen0 = frozenset({face(0)}) if clear(parts0) else frozenset()
    go(0, parts0, seen0, capture_s * len(seen0), {(0, parts0, seen0)})
    return best[0]


FAST_EXHAUSTIVE = ["cubotino", "stepper-turntable", "grippers-90"]


@pytest.mark.parametrize(
    "name",
    [*FAST_EXHAUSTIVE, pytest.param("grippers-180", marks=pytest.mark.slow)],  # ~25 s
)
def test_choreography_is_as_fast_as_an_exhaustive_search(name: str) -> None:
    mechanism = MECHANISMS[name]
    camera = default_camera(mechanism)
    chore = choreograph(mechanism, camera)
    # any sequence faster than the choreography, or as fast, would be found below this bound
    found = _exhaustive(mechanism, camera, DEFAULT_CAPTURE_S, chore.seconds + 0.01)
    assert found == pytest.approx(chore.seconds, abs=1e-9)


def test_an_expensive_cover_is_never_used_and_a_cheap_capture_changes_nothing() -> None:
    slow_cover = Turntable(timing=TurntableTiming(cover_close_s=9.0, cover_open_s=9.0))
    chore = choreograph(slow_cover)
    assert all(a.action.name in ("flip", "spin") for a in chore.actions)
    free = choreograph(Turntable(), capture_s=0.0)
    assert free.seconds == pytest.approx(choreograph(Turntable()).seconds - 6 * DEFAULT_CAPTURE_S)


# -- bookkeeping --------------------------------------------------------------------------


def test_turn_grid_is_a_clockwise_quarter_turn_as_seen() -> None:
    # LTR: row 0 at the bottom. Seen:   2 3        0 2
    #                                    0 1  ->   1 3   (turned clockwise)
    grid = np.array([[0, 1], [2, 3]])
    assert turn_grid(grid, 1).tolist() == [[1, 3], [0, 2]]
    assert turn_grid(grid, 4).tolist() == grid.tolist()
    assert turn_grid(turn_grid(grid, 1), 3).tolist() == grid.tolist()


def test_views_worked_by_hand() -> None:
    f = frames(3)
    # a turntable spin(+1) turns the cube like D (y'): seen from above, U turned anticlockwise
    assert view_of(3, f.of(rotation(Face.D, 1, 3)), Face.U) == (Face.U, 3)
    # a flip (x): F comes up, its top edge towards the back, as U lies on the net: not turned
    assert view_of(3, f.of(rotation(Face.R, 1, 3)), Face.U) == (Face.F, 0)
    # z: L comes up, its top edge (towards U) now towards R: turned clockwise
    assert view_of(3, f.of(rotation(Face.F, 1, 3)), Face.U) == (Face.L, 1)
    # the camera in front after y: R comes to the front, upright
    assert view_of(3, f.of(rotation(Face.U, 1, 3)), Face.F) == (Face.R, 0)
    assert view_of(3, 0, Face.F) == (Face.F, 0)


@pytest.mark.parametrize("n", [2, 3, 4, 5, 7])
def test_camera_grid_is_the_model_face_turned(n: int) -> None:
    for o in range(24):
        face, turn = view_of(n, o, Face.U)
        own = int(face) * n * n + np.arange(n * n).reshape(n, n)
        assert np.array_equal(camera_grid(n, o, Face.U), turn_grid(own, turn))


def _sized(base: Mechanism, n: int) -> Mechanism:
    if isinstance(base, Turntable):
        return Turntable(n=n, table_positions=base.table_positions)
    assert isinstance(base, TwoGripper)
    return TwoGripper(n=n, angles=base.angles)


def _replay_looks(
    mechanism: Mechanism, chore: Choreography, model: Cube, camera: Face | None = None
) -> Cube:
    """Replay ``chore`` on the physical cube (``model`` held in ``chore.start``) as the
    machine moves it; at every look the camera's face, placed by the bookkeeping, must be
    exactly the model's stickers; the physical cube at the end must sit as ``chore.end`` says.
    Returns the cube as it sits at the end."""
    n = model.n
    camera = default_camera(mechanism) if camera is None else camera
    physical = Cube(model.flat[frames(n).perms[chore.start.orientation]], n)
    parts = chore.start.parts
    for i in range(len(chore.actions) + 1):
        for look in (lk for lk in chore.looks if lk.after == i):
            grid = camera_grid(n, look.orientation, camera).reshape(-1)
            assert np.array_equal(physical.stickers[camera].reshape(-1), model.flat[grid])
            assert view_of(n, look.orientation, camera) == (look.face, look.turn)
        if i < len(chore.actions):
            physical, parts = replay(mechanism, physical, [chore.actions[i].action], parts)
    assert np.array_equal(physical.flat, model.flat[frames(n).perms[chore.end.orientation]])
    assert parts == chore.end.parts
    return physical


@pytest.mark.parametrize("name", MECHANISMS)
@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_every_face_seen_once_and_every_sticker_placed_right(name: str, n: int) -> None:
    """Replay the choreography on a scrambled facelet cube as the machine moves it; at every
    look the camera's face, placed by the bookkeeping, is exactly the model's stickers."""
    mechanism = _sized(MECHANISMS[name], n)
    chore = choreograph(mechanism)
    assert sorted(look.face for look in chore.looks) == list(Face)
    _replay_looks(mechanism, chore, _scrambled(n, seed=n))
    assert sum(a.seconds for a in chore.actions) + 6 * DEFAULT_CAPTURE_S == pytest.approx(
        chore.seconds
    )


#: the example profiles' mechanisms and one cameras, at every size each holds (a two-gripper
#: robot with one-layer arms solves N <= 3 but holds and scans bigger cubes too)
PROFILE_SIZES = (
    [("turntable.toml", n) for n in (2, 3, 4, 5)]
    + [("two_gripper.toml", n) for n in (2, 3, 4, 5)]
    + [("bigcube_gripper.toml", n) for n in (2, 3, 4, 5, 6, 7)]
)


def _profile_mechanism(profile: str, n: int) -> tuple[Mechanism, Face]:
    config = load_config(CONFIGS / profile)
    camera = config.scan_camera
    assert camera is not None, f"{profile} scans with one camera"
    return build_mechanism(config.robot.kind, config.robot.mechanism_table, n), Face[
        camera.faces[0]
    ]


@pytest.mark.parametrize(("profile", "n"), PROFILE_SIZES)
def test_every_profile_sees_every_face_and_places_every_sticker(profile: str, n: int) -> None:
    """The example profiles as configured (their mechanism and camera): every face seen once,
    and at every look the camera's cells are the model's stickers the bookkeeping says, from
    the start and from a state mid-job; the second look shows only new views."""
    mechanism, camera = _profile_mechanism(profile, n)
    model = _scrambled(n, seed=30 + n)
    chore = choreograph(mechanism, camera)
    assert sorted(look.face for look in chore.looks) == list(Face)
    assert len(chore.looks) == 6
    end = _replay_looks(mechanism, chore, model, camera)
    assert np.array_equal(end.flat, model.flat[frames(n).perms[chore.end.orientation]])
    rng = np.random.default_rng(n)
    states = mechanism.states()
    start = MachineState(int(rng.integers(24)), states[int(rng.integers(len(states)))])
    mid = choreograph(mechanism, camera, start=start)
    assert sorted(look.face for look in mid.looks) == list(Face)
    _replay_looks(mechanism, mid, model, camera)
    taken = [(look.face, look.turn) for look in chore.looks]
    again = choreograph(mechanism, camera, start=chore.end, faces=[Face.U, Face.R], taken=taken)
    assert sorted(look.face for look in again.looks) == [Face.U, Face.R]
    assert not {(look.face, look.turn) for look in again.looks} & set(taken)
    _replay_looks(mechanism, again, model, camera)


@pytest.mark.parametrize(
    ("profile", "n"),
    [
        ("two_gripper.toml", 2),
        ("two_gripper.toml", 5),
        ("bigcube_gripper.toml", 4),
        pytest.param("bigcube_gripper.toml", 7, marks=pytest.mark.slow),
    ],
)
def test_every_profile_reads_the_cube_through_its_one_camera(profile: str, n: int) -> None:
    """Render → vision → model through each profile's own camera; the read is the cube."""
    mechanism, camera = _profile_mechanism(profile, n)
    truth = _scrambled(n, seed=50 + n)
    params = SMALL if n <= 5 else RenderParams(width=320, height=240)
    rig = SimulatedScanRig(mechanism, truth, camera, params=params, seed=n)
    scan = asyncio.run(simulate_scan(rig))
    assert scan.read.accepted, scan.read.in_doubt
    assert np.array_equal(scan.read.cube.flat, truth.flat)
    assert scan.cube_as_held() == rig.cube


@pytest.mark.parametrize("name", MECHANISMS)
def test_from_any_state_and_for_second_looks_the_bookkeeping_holds(name: str) -> None:
    rng = np.random.default_rng(7)
    mechanism = _sized(MECHANISMS[name], 4)
    states = mechanism.states()
    for trial in range(6):
        parts = states[int(rng.integers(len(states)))]
        start = MachineState(int(rng.integers(24)), parts)
        model = _scrambled(4, seed=100 + trial)
        chore = choreograph(mechanism, start=start)
        assert sorted(look.face for look in chore.looks) == list(Face)
        _replay_looks(mechanism, chore, model)
        faces = [Face(int(f)) for f in rng.choice(6, size=2, replace=False)]
        taken = [(look.face, look.turn) for look in chore.looks]
        again = choreograph(mechanism, start=chore.end, faces=faces, taken=taken)
        assert sorted(look.face for look in again.looks) == sorted(faces)
        assert not {(look.face, look.turn) for look in again.looks} & set(taken)
        _replay_looks(mechanism, again, model)


@pytest.mark.parametrize("n", [2, 3, 4])
def test_rotation_moves_spell_every_orientation(n: int) -> None:
    f = frames(n)
    for o in range(24):
        assert np.array_equal(sequence_permutation(rotation_moves(n, o), n), f.perms[o])


def test_a_second_look_shows_the_faces_in_views_not_taken() -> None:
    mechanism = Turntable()
    first = choreograph(mechanism)
    taken = [(look.face, look.turn) for look in first.looks]
    again = choreograph(mechanism, start=first.end, faces=[Face.R, Face.U], taken=taken)
    views = [(look.face, look.turn) for look in again.looks]
    assert sorted(face for face, _ in views) == [Face.U, Face.R]
    assert not set(views) & set(taken)
    # the face now on top only needs a spin to be seen turned
    on_top = view_of(3, first.end.orientation, Face.U)[0]
    quick = choreograph(mechanism, start=first.end, faces=[on_top], taken=taken)
    assert [a.action.name for a in quick.actions] == ["spin"]


# -- errors --------------------------------------------------------------------------------


def test_impossible_cameras_and_states_are_named() -> None:
    with pytest.raises(PlanError, match="gripper holds"):
        choreograph(TwoGripper(), Face.D)
    with pytest.raises(PlanError, match="cradle"):
        choreograph(Turntable(), Face.D)
    with pytest.raises(PlanError, match="home the machine"):
        choreograph(Turntable(), start=MachineState(0, (0, 5)))
    with pytest.raises(PlanError, match="orientation 24"):
        choreograph(Turntable(), start=MachineState(24, (0, 0)))
    # opposed grippers on U and D turn the cube about one axis only: U and D never show at F
    with pytest.raises(PlanError, match="cannot show"):
        choreograph(TwoGripper(positions=(Face.U, Face.D)), Face.F)


def test_a_calibration_of_another_face_is_refused() -> None:
    mechanism = Turntable()
    rig = SimulatedScanRig(mechanism, Cube.solved(3), params=SMALL)
    wrong = tuple(
        StickerSite(Face.F, s.row, s.col, s.centre, s.quad, s.half_size) for s in rig.sites
    )
    with pytest.raises(CalibrationError, match="looks at U"):
        asyncio.run(run_scan(mechanism, rig.act, rig.capture, wrong))
    with pytest.raises(CalibrationError, match="distinct sites"):
        asyncio.run(run_scan(mechanism, rig.act, rig.capture, rig.sites[:-1]))
    assert rig.actions == []  # refused before the machine moved


# -- the simulated scan --------------------------------------------------------------------


def _mechanism(kind: str, n: int) -> Mechanism:
    return Turntable(n=n) if kind == "turntable" else TwoGripper(n=n)


@pytest.mark.parametrize("kind", ["turntable", "two-gripper"])
@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_simulated_scan_reads_the_cube(kind: str, n: int) -> None:
    mechanism = _mechanism(kind, n)
    truth = _scrambled(n, seed=10 + n)
    rig = SimulatedScanRig(mechanism, truth, params=SMALL, seed=n)
    scan = asyncio.run(simulate_scan(rig))
    assert scan.read.accepted, scan.read.in_doubt
    assert np.array_equal(scan.read.cube.flat, truth.flat)
    assert rig.frames == 6 + scan.second_looks and scan.looks_per_sticker >= 1
    assert scan.seconds == pytest.approx(sum(p.seconds for p in scan.passes))
    # the state returned is the machine's: the cube sits as the orientation says
    q = frames(n).perms[scan.state.orientation]
    assert np.array_equal(rig.cube.flat, truth.flat[q])
    assert scan.state.parts == rig.parts
    assert scan.cube_as_held() == rig.cube
    # every sticker's evidence was read on the camera's face
    cam = int(rig.camera) * n * n
    for places in scan.places_read():
        assert places and all(cam <= p < cam + n * n for p in places)
    assert scan.scan_result().to_facelets() == truth.to_facelets()


def test_scan_from_a_state_mid_job_reads_in_the_callers_frame() -> None:
    """The machine is not at its start (the table turned, the cube held some other way): the
    read is the model in the caller's frame, and the state afterwards is where the cube is."""
    n = 3
    mechanism = Turntable(n=n)
    truth = _scrambled(n, seed=5)
    start = MachineState(orientation=13, parts=(0, -1))
    physical = Cube(truth.flat[frames(n).perms[start.orientation]], n)
    rig = SimulatedScanRig(mechanism, physical, parts=start.parts, params=SMALL, seed=3)
    scan = asyncio.run(simulate_scan(rig, start=start))
    assert scan.read.accepted
    assert np.array_equal(scan.read.cube.flat, truth.flat)
    assert np.array_equal(rig.cube.flat, truth.flat[frames(n).perms[scan.state.orientation]])
    with pytest.raises(PlanError, match="rig's parts"):
        asyncio.run(simulate_scan(rig, start=MachineState(0, (0, 1))))


class _WashedOut(SimulatedScanRig):
    """A rig whose second frame is washed out (a reflection over the whole face)."""

    async def capture(self) -> np.ndarray:
        image = await super().capture()
        if self.frames == 2:
            image = (0.3 * image + 0.7 * 235).astype(np.uint8)
        return image


def test_a_second_look_settles_a_washed_out_face() -> None:
    n = 4
    truth = _scrambled(n, seed=24)
    alone = _WashedOut(Turntable(n=n), truth, params=SMALL, seed=n)
    once = asyncio.run(simulate_scan(alone, second_looks=0))
    assert not once.read.accepted  # refused, not read wrong
    rig = _WashedOut(Turntable(n=n), truth, params=SMALL, seed=n)
    scan = asyncio.run(simulate_scan(rig, second_looks=1))
    assert scan.read.accepted
    assert np.array_equal(scan.read.cube.flat, truth.flat)
    assert scan.second_looks > 0 and rig.frames == 6 + scan.second_looks
    views = [(lk.face, lk.turn) for p in scan.passes for lk in p.looks]
    assert len(set(views)) == len(views)  # every look a new view
    washed = scan.passes[0].looks[1].face
    assert washed in {lk.face for lk in scan.passes[1].looks}
    # the washed face's stickers were read at two places of the image, and summed as such
    places = scan.places_read()
    first = int(washed) * n * n
    assert all(len(places[i]) == 2 for i in range(first, first + n * n))
    q = frames(n).perms[scan.state.orientation]
    assert np.array_equal(rig.cube.flat, truth.flat[q])


def test_frames_that_show_no_cube_are_a_typed_error() -> None:
    from vision.errors import NoCubeError

    mechanism = TwoGripper(n=3)
    rig = SimulatedScanRig(mechanism, Cube.solved(3), params=SMALL)

    async def grey() -> np.ndarray:
        return np.full((SMALL.height, SMALL.width, 3), 128, dtype=np.uint8)

    with pytest.raises(NoCubeError):
        asyncio.run(run_scan(mechanism, rig.act, grey, rig.sites))
    with pytest.raises(ValueError, match="second_looks"):
        asyncio.run(run_scan(mechanism, rig.act, grey, rig.sites, second_looks=-1))


def test_the_planner_continues_from_the_scan() -> None:
    """Scan, solve the read as the cube sits, plan from the scan's parts' state: the plan
    replayed on the rig's cube solves it."""
    from robot.kinds import KindPlanner
    from solver.api import solve

    mechanism = Turntable()
    rig = SimulatedScanRig(mechanism, _scrambled(3, seed=42), params=SMALL, seed=1)
    scan = asyncio.run(simulate_scan(rig))
    assert scan.read.accepted
    solution = solve(scan.cube_as_held(), budget_s=0.05)
    plan = KindPlanner(mechanism).plan(solution.moves, start=scan.state.parts)
    final, _ = replay(mechanism, rig.cube, [a.action for a in plan.actions], rig.parts)
    assert final.is_solved()


class _Crash(Exception):
    pass


@pytest.mark.parametrize(("kind", "n", "k"), [("turntable", 3, 2), ("two-gripper", 4, 9)])
def test_an_interrupted_scan_goes_on_from_its_looks(kind: str, n: int, k: int) -> None:
    """The machine stops after ``k`` actions (the daemon died); the looks taken so far (given
    by ``on_look``) and the machine's state then are all a new scan needs: it shows only the
    faces still missing, and reads the cube in the first scan's frame, no slower in all than
    a scan with no interruption."""
    mechanism = _mechanism(kind, n)
    truth = _scrambled(n, seed=60 + n)
    rig = SimulatedScanRig(mechanism, truth, params=SMALL, seed=n)
    taken: list[TakenLook] = []
    state = [MachineState(0, rig.parts)]

    async def act(action: Action) -> None:
        if len(rig.actions) == k:
            raise _Crash
        await rig.act(action)
        step = next(s for s in mechanism.free_steps(state[-1].parts) if s.action == action)
        o = state[-1].orientation
        if step.effect is not None:
            o = int(frames(n).after[o, frames(n).of(step.effect)])
        state.append(MachineState(o, step.after))

    async def keep(look: TakenLook) -> None:
        taken.append(look)

    with pytest.raises(_Crash):
        asyncio.run(run_scan(mechanism, act, rig.capture, rig.sites, on_look=keep))
    assert 0 < len(taken) < 6 and rig.frames == len(taken)
    scan = asyncio.run(
        run_scan(mechanism, rig.act, rig.capture, rig.sites, start=state[-1], prior=taken)
    )
    assert scan.read.accepted and np.array_equal(scan.read.cube.flat, truth.flat)
    assert scan.restored == len(taken) and rig.frames == 6 + scan.second_looks
    first = {lk.face for lk in scan.passes[0].looks}
    assert first == set(Face) - {t.look.face for t in taken}
    assert len(rig.actions) <= len(choreograph(mechanism).actions) + sum(
        len(p.actions) for p in scan.passes[1:]
    )
    q = frames(n).perms[scan.state.orientation]
    assert np.array_equal(rig.cube.flat, truth.flat[q])
    # a look that is not what its orientation shows (another camera's) is refused
    wrong = TakenLook(replace(taken[0].look, turn=(taken[0].look.turn + 1) % 4), taken[0].samples)
    with pytest.raises(PlanError, match="prior look"):
        asyncio.run(run_scan(mechanism, rig.act, rig.capture, rig.sites, prior=[wrong]))
