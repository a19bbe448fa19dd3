"""One-camera scanning for the mechanism kinds: which actions show the camera every face, and
where each sticker the camera sees belongs in the model.

A turntable or two-gripper robot has one camera at a fixed place: it sees one *physical* face
(``camera``, :mod:`robot.kinds.frames`' physical frame) and the mechanism re-orients the cube
in front of it. Three parts:

* **Choreography** (:func:`choreograph`): the fastest sequence of the kind's *free* steps (flips,
  open spins, gripper re-orientations: whole-cube rotations, never a layer turn) after which the
  camera has seen each wanted face once, found by a uniform-cost search over (orientation,
  parts' state, faces seen so far) with the kind's own step durations plus ``capture_s`` per
  frame taken. Optimal by construction (Dijkstra over every state the machine can reach);
  ``tests/robot/kinds/test_choreography.py`` checks it against an independent exhaustive
  branch-and-bound search over action sequences. The same search finds a *second look*: the
  fastest way to show some faces again in views not taken yet (another in-plane turn puts each
  sticker on another part of the image, under other light).
* **Bookkeeping** (:func:`camera_grid`, :func:`view_of`): in orientation ``Q`` (physical cube
  ``P = X[Q]``, the model ``X`` as the solution sees it) the camera's cell ``(row, col)`` of the
  physical face shows model sticker ``Q[camera * N² + row * N + col]`` (LTR layout of
  :mod:`solver.cube.facelets`), for any N. :func:`view_of` names the model face and how many
  quarter turns clockwise it appears turned in the camera's grid.
* **The scan** (:func:`run_scan`, async, for the daemon): act and capture through callables,
  sample each frame at the camera's calibrated sticker sites (:mod:`vision.locate`), place the
  samples in the model by the bookkeeping, classify the whole cube (:mod:`vision.classify`),
  and optionally look again at faces with doubtful stickers, combining the looks per physical
  sticker position with :class:`vision.evidence.Evidence`. The result carries the read, the
  evidence and the mechanism's state afterwards (orientation and parts), from which the planner
  continues. :func:`simulate_scan` runs it on a virtual cube with the simulated camera
  (:class:`vision.capture.SimulatedCamera`).

The read is in the caller's notation frame: the frame in which the machine's orientation at
the start is ``start.orientation`` (0: the cube as it sits in the machine when the scan begins).

Evidence: every capture is one observation of the cube *as it sits in the machine then* (the
read's costs moved to physical positions, only the camera's face carrying evidence), added
with the whole-cube rotation from the reference as its moves; so :class:`Evidence` sees which
physical place (which part of the image) each sticker was read at, and two looks at a sticker
from the same place are averaged, from different places summed. ``Evidence.viewpoints``
therefore counts frames, and ``Evidence.positions_seen`` also lists where a sticker was while
out of view; :meth:`KindScan.places_read` lists only where it was read, and
:attr:`KindScan.looks_per_sticker` counts the places of the least-seen sticker (1 after a
single pass).
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import logging
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass, replace
from functools import cache, lru_cache
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from robot.errors import PlanError
from robot.kinds.frames import N_ORIENTATIONS, Frames, frames
from robot.kinds.gripper import TwoGripper
from robot.kinds.mechanism import Action, Mechanism, PartsState, Step
from robot.kinds.planner import PlannedAction
from robot.kinds.simulate import replay
from robot.kinds.turntable import Turntable
from solver.cube.facelets import DEFAULT_SCHEME, ColourScheme, Cube, sequence_permutation
from solver.cube.geometry import Face
from solver.cube.notation import Move, parse

if TYPE_CHECKING:  # vision (and OpenCV) load when a scan first runs
    from vision.calibration import StickerSite
    from vision.classify import Classification
    from vision.evidence import Evidence
    from vision.render import RenderParams
    from vision.scan import ScanResult

__all__ = [
    "DEFAULT_CAPTURE_S",
    "Choreography",
    "KindScan",
    "Look",
    "MachineState",
    "SimulatedScanRig",
    "camera_grid",
    "choreograph",
    "default_camera",
    "rotation_moves",
    "run_scan",
    "simulate_scan",
    "turn_grid",
    "view_of",
]

logger = logging.getLogger(__name__)

#: seconds one frame costs: the machine settling, then an exposure (a Pi camera at 30 fps with
#: a frame or two dropped after motion)
DEFAULT_CAPTURE_S = 0.15

UInt8Image = npt.NDArray[np.uint8]
Grid = npt.NDArray[np.intp]
#: a view of one model face: (face, quarter turns clockwise it appears turned by)
View = tuple[Face, int]


@dataclass(frozen=True, slots=True)
class MachineState:
    """How the cube sits in the machine (orientation index, :func:`robot.kinds.frames.frames`)
    and the state of the machine's parts (:class:`~robot.kinds.mechanism.Mechanism`)."""

    orientation: int
    parts: PartsState


@dataclass(frozen=True, slots=True)
class Look:
    """A frame taken after ``after`` actions of a choreography, the cube in ``orientation``:
    the camera sees model ``face`` turned ``turn`` quarter turns clockwise (:func:`view_of`)."""

    after: int
    orientation: int
    face: Face
    turn: int


@dataclass(frozen=True, slots=True)
class Choreography:
    """Actions (free steps only) and the frames to take between them."""

    actions: tuple[PlannedAction, ...]
    looks: tuple[Look, ...]
    #: machine time of the actions plus ``capture_s`` per look
    seconds: float
    start: MachineState
    end: MachineState

    def __str__(self) -> str:
        words: list[str] = []
        for i in range(len(self.actions) + 1):
            words.extend(f"look[{look.face.name}]" for look in self.looks if look.after == i)
            if i < len(self.actions):
                words.append(str(self.actions[i].action))
        return " ".join(words)


# ---------------------------------------------------------------------------------------------
# Bookkeeping


def turn_grid(grid: npt.NDArray[np.generic], turns: int) -> npt.NDArray[np.generic]:
    """An N×N grid in LTR layout (row 0 at the bottom) turned ``turns`` quarter turns
    clockwise as seen: the cell at ``(r, c)`` goes to ``(N-1-c, r)``."""
    out = np.asarray(grid)
    n = out.shape[0]
    rows, cols = np.indices((n, n))
    for _ in range(turns % 4):
        turned = np.empty_like(out)
        turned[n - 1 - cols, rows] = out[rows, cols]
        out = turned
    return out


def camera_grid(n: int, orientation: int, camera: Face) -> Grid:
    """``grid[row, col]``: the model's flat facelet index the camera's cell ``(row, col)`` (LTR
    layout of the physical face ``camera``) shows with the cube in ``orientation``."""
    q = frames(n).perms[orientation]
    start = int(camera) * n * n
    grid: Grid = q[start : start + n * n].reshape(n, n).copy()
    return grid


def view_of(n: int, orientation: int, camera: Face) -> View:
    """The model face the camera sees in ``orientation``, and the quarter turns clockwise it
    appears turned by: ``camera_grid(...) == turn_grid(model face's own grid, turn)``."""
    if n < 2:
        raise ValueError(f"a cube of N={n} has no in-plane turn to track (N must be 2 or more)")
    grid = camera_grid(n, orientation, camera)
    face = Face(int(grid[0, 0]) // (n * n))
    own = int(face) * n * n + np.arange(n * n, dtype=np.intp).reshape(n, n)
    for turn in range(4):
        if np.array_equal(turn_grid(own, turn), grid):
            return face, turn
    raise AssertionError(f"orientation {orientation} maps a face onto no turn of another")


@cache
def _rotation_moves(n: int) -> tuple[tuple[Move, ...], ...]:
    frames_ = frames(n)
    found: dict[int, tuple[Move, ...]] = {0: ()}
    frontier: list[tuple[Move, ...]] = [()]
    gens = parse("x y z x' y' z' x2 y2 z2")
    while frontier and len(found) < N_ORIENTATIONS:
        grown = []
        for seq in frontier:
            for g in gens:
                nxt = (*seq, g)
                o = frames_.of(sequence_permutation(nxt, n))
                if o not in found:
                    found[o] = nxt
                    grown.append(nxt)
        frontier = grown
    return tuple(found[o] for o in range(N_ORIENTATIONS))


def rotation_moves(n: int, orientation: int) -> tuple[Move, ...]:
    """Whole-cube rotations (x, y, z) whose permutation is ``orientation``: the "moves" from
    the model to the cube as it sits in the machine, for :meth:`vision.evidence.Evidence.add`."""
    return _rotation_moves(n)[orientation]


# ---------------------------------------------------------------------------------------------
# The search


def default_camera(mechanism: Mechanism) -> Face:
    """Where the one camera of a kind usually is: above a turntable (U, as on CUBOTino), in
    front of a two-gripper robot (the first of F U R L not held by a gripper)."""
    if isinstance(mechanism, TwoGripper):
        return next(f for f in (Face.F, Face.U, Face.R, Face.L) if f not in mechanism.positions)
    return Face.U


def _check_camera(mechanism: Mechanism, camera: Face) -> None:
    if isinstance(mechanism, Turntable) and camera is Face.D:
        raise PlanError("the camera cannot look at D: the turntable's cradle holds that face")
    if isinstance(mechanism, TwoGripper) and camera in mechanism.positions:
        raise PlanError(
            f"the camera cannot look at {camera.name}: a gripper holds that face; "
            "put it at a free face (e.g. F or U) in the profile"
        )


def _can_capture(mechanism: Mechanism, parts: PartsState) -> bool:
    """The camera's view is clear: on a turntable, the cover is open (it comes down on U)."""
    return not isinstance(mechanism, Turntable) or parts[0] == 0


@dataclass(frozen=True, slots=True)
class _Move:
    step: Step
    after: int  # parts index
    rotation: int  # orientation index of the step's effect (0 = the cube does not move)


@dataclass(eq=False)
class _Graph:
    """A mechanism's free steps as a graph over (orientation, parts)."""

    mechanism: Mechanism
    camera: Face

    def __post_init__(self) -> None:
        self.frames: Frames = frames(self.mechanism.n)
        self.parts = self.mechanism.states()
        self.index = {p: i for i, p in enumerate(self.parts)}
        self.moves: list[list[_Move]] = []
        for parts in self.parts:
            out = []
            for step in self.mechanism.free_steps(parts):
                r = 0 if step.effect is None else self.frames.of(step.effect)
                out.append(_Move(step, self.index[step.after], r))
            self.moves.append(out)
        self.capture = [_can_capture(self.mechanism, p) for p in self.parts]
        self.views = [view_of(self.mechanism.n, o, self.camera) for o in range(N_ORIENTATIONS)]


@cache
def _graph(mechanism: Mechanism, camera: Face) -> _Graph:
    return _Graph(mechanism, camera)


def choreograph(
    mechanism: Mechanism,
    camera: Face | None = None,
    *,
    start: MachineState | None = None,
    faces: Collection[Face] = tuple(Face),
    taken: Collection[View] = (),
    capture_s: float = DEFAULT_CAPTURE_S,
) -> Choreography:
    """The fastest choreography from ``start`` (the identity orientation and the mechanism's
    start by default) that shows the camera each of ``faces`` (model faces) once in a view not
    in ``taken`` ((face, turn) pairs already captured). :class:`PlanError` if the camera sits
    where it cannot see, ``start`` is a state the machine never reaches, or some face cannot
    be shown. Results are cached per mechanism object and arguments."""
    camera = default_camera(mechanism) if camera is None else camera
    _check_camera(mechanism, camera)
    if capture_s < 0:
        raise ValueError(f"capture_s must be 0 or more seconds, got {capture_s}")
    start = start or MachineState(0, mechanism.start)
    if not 0 <= start.orientation < N_ORIENTATIONS:
        raise PlanError(f"orientation {start.orientation} is not one of 0..{N_ORIENTATIONS - 1}")
    if start.parts not in _graph(mechanism, camera).index:
        raise PlanError(
            f"the parts' state {start.parts} is not one this {type(mechanism).__name__} reaches "
            f"from its start {mechanism.start}; home the machine first"
        )
    return _choreograph(mechanism, camera, start, frozenset(faces), frozenset(taken), capture_s)


_Node = tuple[int, int, int]  # orientation, parts index, bit mask of the wanted faces seen


@lru_cache(maxsize=256)
def _choreograph(
    mechanism: Mechanism,
    camera: Face,
    start: MachineState,
    faces: frozenset[Face],
    taken: frozenset[View],
    capture_s: float,
) -> Choreography:
    """Uniform-cost search over (orientation, parts, faces seen); a frame is taken on
    arriving where a wanted face not seen yet shows in a new view (taking it then is never
    slower than later: every frame costs the same)."""
    graph = _graph(mechanism, camera)
    wanted = sorted(faces)
    bit = {face: 1 << i for i, face in enumerate(wanted)}
    full = (1 << len(wanted)) - 1

    def gain(o: int, p: int, mask: int) -> int:
        view = graph.views[o]
        if not graph.capture[p] or view in taken:
            return 0
        return bit.get(view[0], 0) & ~mask

    p0 = graph.index[start.parts]
    first = gain(start.orientation, p0, 0)
    begin: _Node = (start.orientation, p0, first)
    best: dict[_Node, tuple[float, int]] = {begin: (capture_s if first else 0.0, 0)}
    back: dict[_Node, tuple[_Node, Step]] = {}
    counter = itertools.count()
    heap = [(best[begin][0], 0, next(counter), begin)]
    while heap:
        cost, count, _, node = heapq.heappop(heap)
        if (cost, count) > best[node]:
            continue
        o, p, mask = node
        if mask == full:
            return _spell_out(graph, begin, node, back, cost)
        for move in graph.moves[p]:
            o2 = int(graph.frames.after[o, move.rotation])
            new = gain(o2, move.after, mask)
            nxt = (o2, move.after, mask | new)
            score = (cost + move.step.seconds + (capture_s if new else 0.0), count + 1)
            if score < best.get(nxt, (np.inf, 0)):
                best[nxt] = score
                back[nxt] = (node, move.step)
                heapq.heappush(heap, (score[0], score[1], next(counter), nxt))
    names = ", ".join(f.name for f in wanted)
    raise PlanError(
        f"this {type(mechanism).__name__} cannot show the camera at {camera.name} every one "
        f"of {names} (in a view not taken yet); check the profile's flip and camera"
    )


def _spell_out(
    graph: _Graph,
    begin: _Node,
    end: _Node,
    back: dict[_Node, tuple[_Node, Step]],
    seconds: float,
) -> Choreography:
    nodes = [end]
    steps: list[Step] = []
    while nodes[-1] != begin:
        node, step = back[nodes[-1]]
        nodes.append(node)
        steps.append(step)
    nodes.reverse()
    steps.reverse()
    looks = []
    previous = 0
    for i, (o, _, mask) in enumerate(nodes):
        if mask != previous:
            face, turn = graph.views[o]
            looks.append(Look(i, o, face, turn))
        previous = mask
    o0, p0, _ = begin
    o1, p1, _ = end
    return Choreography(
        tuple(PlannedAction(s.action, s.seconds) for s in steps),
        tuple(looks),
        seconds,
        MachineState(o0, graph.parts[p0]),
        MachineState(o1, graph.parts[p1]),
    )


# ---------------------------------------------------------------------------------------------
# The scan

#: acts one action of the mechanism (returns when the machine has done it)
Act = Callable[[Action], Awaitable[None]]
#: takes one frame of the camera (BGR uint8)
Capture = Callable[[], Awaitable[UInt8Image]]


@dataclass(frozen=True, eq=False)
class KindScan:
    """What a one-camera scan read, and the machine's state afterwards.

    ``read`` is the reading to act on (only if ``read.accepted``): vision's classification of
    the first pass, or, after second looks, :meth:`Evidence.combined` of every look.
    ``samples`` are the L*a*b* samples of the latest view of every sticker (model, LTR
    layout); ``evidence`` holds one observation per frame of a cube's colours (see the module
    docstring); ``state`` is where the planner starts from; ``seconds`` is the machine time of
    every choreography run (captures included).
    """

    read: Classification
    samples: npt.NDArray[np.float64]
    evidence: Evidence
    passes: tuple[Choreography, ...]
    state: MachineState
    seconds: float

    @property
    def n(self) -> int:
        return self.read.n

    @property
    def second_looks(self) -> int:
        """Frames taken after the first pass."""
        return sum(len(p.looks) for p in self.passes[1:])

    def cube_as_held(self) -> Cube:
        """The read cube as it sits in the machine now: the model in the frame whose
        orientation is the identity after the scan, which is where
        :meth:`robot.kinds.planner.KindPlanner.plan` starts (with ``parts=state.parts``)."""
        q = frames(self.n).perms[self.state.orientation]
        return Cube(self.read.cube.flat[q], self.n)

    def places_read(self) -> list[set[int]]:
        """Per model sticker (flat index), the places in the machine (physical flat indices:
        cells of the camera's face) it was read at. Unlike ``Evidence.positions_seen`` this
        leaves out the frames in which the sticker was out of view."""
        places: list[set[int]] = [set() for _ in range(6 * self.n * self.n)]
        for obs in self.evidence.observations:
            for sticker in np.flatnonzero(np.any(obs.costs != 0.0, axis=1)).tolist():
                places[sticker].add(int(obs.seen_at[sticker]))
        return places

    @property
    def looks_per_sticker(self) -> int:
        """The number of places (parts of the image) the least-seen sticker was read at."""
        return min(len(p) for p in self.places_read())

    def scan_result(self) -> ScanResult:
        """The read as a :class:`vision.scan.ScanResult` (what the daemon's camera read gives)."""
        from vision.scan import ScanResult

        return ScanResult(self.read, self.samples)


def _check_sites(sites: Sequence[StickerSite], n: int, camera: Face) -> list[int]:
    """The camera-face cell (``row * n + col``) of each site; every cell exactly once."""
    from vision.errors import CalibrationError

    cells = []
    for site in sites:
        if site.face is not camera or not (0 <= site.row < n and 0 <= site.col < n):
            raise CalibrationError(
                f"the scan camera looks at {camera.name} of an N={n} cube, but a calibrated "
                f"site is {site.face.name}[{site.row},{site.col}]; calibrate the camera again "
                f"with the cube's {camera.name} face towards it"
            )
        cells.append(site.row * n + site.col)
    if sorted(cells) != list(range(n * n)):
        raise CalibrationError(
            f"the scan camera's calibration has {len(set(cells))} distinct sites of the "
            f"{n * n} of face {camera.name}; calibrate the camera again"
        )
    return cells


def _as_seen(read: Classification, orientation: int, camera: Face) -> Classification:
    """``read`` (model frame) as one frame saw it: stickers at their places in the machine
    (``orientation``), only the camera's face carrying evidence."""
    n = read.n
    q = frames(n).perms[orientation]
    m = 6 * n * n
    assert read.colour_costs is not None
    costs = read.colour_costs.reshape(m, 6)[q]
    outside = np.ones(m, dtype=bool)
    outside[int(camera) * n * n : (int(camera) + 1) * n * n] = False
    costs[outside] = 0.0  # not in the frame: no evidence
    disputed = None if read.disputed is None else read.disputed.reshape(-1)[q].reshape(6, n, n)
    return replace(
        read,
        cube=Cube(read.cube.flat[q], n),
        colour_costs=costs.reshape(6, n, n, 6),
        disputed=disputed,
    )


def _sure(read: Classification) -> bool:
    """A first-pass reading to act on as it is (the daemon's rule for a single viewpoint,
    :func:`robot.daemon.rescan.sure`): accepted, valid, nothing repaired."""
    return read.accepted and read.valid and not read.repairs


def _doubtful_faces(read: Classification) -> list[Face]:
    stickers = [*read.in_doubt, *(s for r in read.repairs for s in r.stickers)]
    return sorted({Face(int(s.face)) for s in stickers})


@dataclass(eq=False)
class _Scanner:
    """One scan in progress: acts choreographies, places what the frames show in the model
    (``current``: the latest view of every sticker) and keeps the evidence."""

    mechanism: Mechanism
    camera: Face
    act: Act
    capture: Capture
    sites: Sequence[StickerSite]
    scheme: ColourScheme
    capture_s: float

    def __post_init__(self) -> None:
        from vision.evidence import Evidence

        n = self.mechanism.n
        self.cells = _check_sites(self.sites, n, self.camera)
        self.current = np.full((6, n, n, 3), np.nan)
        self.evidence = Evidence(n, scheme=self.scheme)
        self.passes: list[Choreography] = []
        self.taken: list[View] = []

    @property
    def state(self) -> MachineState:
        return self.passes[-1].end

    async def scan(self, start: MachineState | None) -> Classification:
        """The first pass: every face once; vision's read of it."""
        chore = choreograph(self.mechanism, self.camera, start=start, capture_s=self.capture_s)
        return await self._pass(chore)

    async def look_again(self, read: Classification) -> Classification | None:
        """Show the faces with doubtful stickers in new views; the reading all looks support
        (None: no doubtful sticker, or no new view of them)."""
        doubt = _doubtful_faces(read)
        if not doubt:
            return None
        try:
            chore = choreograph(
                self.mechanism,
                self.camera,
                start=self.state,
                faces=doubt,
                taken=self.taken,
                capture_s=self.capture_s,
            )
        except PlanError as exc:
            logger.info("scan: no new view of %s: %s", " ".join(f.name for f in doubt), exc)
            return None
        await self._pass(chore)
        combined = self.evidence.combined()
        logger.info(
            "scan: second look at %s: %s, confidence %.4f",
            " ".join(f.name for f in doubt),
            combined.verdict,
            combined.cube_confidence,
        )
        return combined

    async def _pass(self, chore: Choreography) -> Classification:
        """Act ``chore``; classify the latest view of every face; one observation per frame."""
        from vision.classify import classify

        looks = await self._frames(chore)
        self.passes.append(chore)
        read = await asyncio.to_thread(classify, self.current, scheme=self.scheme)
        if read.distinct:  # else not a cube's colours: no evidence
            for look in looks:
                observation = _as_seen(read, look.orientation, self.camera)
                self.evidence.add(observation, rotation_moves(self.mechanism.n, look.orientation))
        return read

    async def _frames(self, chore: Choreography) -> list[Look]:
        """Act ``chore``, taking its frames and placing their samples in ``current``."""
        from vision.locate import sample_sites

        n = self.mechanism.n
        looks = {look.after: look for look in chore.looks}
        for i in range(len(chore.actions) + 1):
            look = looks.get(i)
            if look is not None:
                image = await self.capture()
                lab = await asyncio.to_thread(sample_sites, image, self.sites)
                values = np.empty((n * n, 3))
                values[self.cells] = lab
                grid = camera_grid(n, look.orientation, self.camera).reshape(-1)
                self.current.reshape(-1, 3)[grid] = values
                self.taken.append((look.face, look.turn))
                logger.debug("scan: %s seen turned %d", look.face.name, look.turn)
            if i < len(chore.actions):
                await self.act(chore.actions[i].action)
        return list(chore.looks)


async def run_scan(
    mechanism: Mechanism,
    act: Act,
    capture: Capture,
    sites: Sequence[StickerSite],
    *,
    camera: Face | None = None,
    start: MachineState | None = None,
    second_looks: int = 1,
    capture_s: float = DEFAULT_CAPTURE_S,
    scheme: ColourScheme = DEFAULT_SCHEME,
) -> KindScan:
    """Scan the cube in ``mechanism`` with one camera.

    ``act(action)`` makes the machine do one action and returns when it is done; ``capture()``
    returns the camera's frame (BGR); ``sites`` are the camera's calibrated sticker sites (the
    N² cells of the physical face ``camera`` it looks at: a
    :class:`vision.calibration.ViewCalibration`'s sites). ``start`` is the machine's state now
    (the identity orientation and the mechanism's start by default). When the first pass is not
    sure (not accepted, or repaired), up to ``second_looks`` more passes show the faces with
    doubtful stickers again in views not taken yet, and the looks are combined.

    Raises :class:`~robot.errors.PlanError` (a camera or state the mechanism cannot scan
    from), :class:`~vision.errors.CalibrationError` (``sites`` not the camera's face),
    :class:`~vision.errors.ScanInputError` / :class:`~vision.errors.NoCubeError` (frames that
    are no cube), and whatever ``act`` and ``capture`` raise.
    """
    camera = default_camera(mechanism) if camera is None else camera
    if second_looks < 0:
        raise ValueError(f"second_looks must be 0 or more, got {second_looks}")
    scanner = _Scanner(mechanism, camera, act, capture, sites, scheme, capture_s)
    read = await scanner.scan(start)
    sure = _sure(read)
    for _ in range(second_looks):
        if sure or not read.distinct:
            break
        combined = await scanner.look_again(read)
        if combined is None:
            break
        read, sure = combined, combined.accepted  # several views: the daemon's rule too
    seconds = sum(p.seconds for p in scanner.passes)
    return KindScan(
        read, scanner.current, scanner.evidence, tuple(scanner.passes), scanner.state, seconds
    )


# ---------------------------------------------------------------------------------------------
# The simulated run


class SimulatedScanRig:
    """A mechanism holding a virtual cube, and one simulated camera at ``camera``.

    ``cube`` is the cube as it sits in the machine (the physical frame). :meth:`act` moves it
    exactly as the mechanism would (:func:`robot.kinds.simulate.replay`: a flip or an open
    spin turns the whole cube); :meth:`capture` renders the camera's view
    (:class:`vision.capture.SimulatedCamera`: fixed pose, per-frame light and noise); ``sites``
    is that camera's calibration.
    """

    def __init__(
        self,
        mechanism: Mechanism,
        cube: Cube,
        camera: Face | None = None,
        *,
        parts: PartsState | None = None,
        params: RenderParams | None = None,
        severity: float = 0.3,
        seed: int = 0,
    ) -> None:
        from vision.capture import SimulatedCamera

        if cube.n != mechanism.n:
            raise ValueError(f"an N={cube.n} cube in a mechanism built for N={mechanism.n}")
        self.mechanism = mechanism
        self.cube = cube
        self.parts = mechanism.start if parts is None else parts
        self.camera = default_camera(mechanism) if camera is None else camera
        self.actions: list[Action] = []
        self.frames = 0
        self._camera = SimulatedCamera(
            lambda: self.cube, self.camera.name, params=params, severity=severity, seed=seed
        )
        self.sites: tuple[StickerSite, ...] = self._camera.calibration().sites

    async def act(self, action: Action) -> None:
        self.cube, self.parts = replay(self.mechanism, self.cube, [action], self.parts)
        self.actions.append(action)

    async def capture(self) -> UInt8Image:
        self.frames += 1
        image: UInt8Image = await asyncio.to_thread(self._camera.read)
        return image


async def simulate_scan(
    rig: SimulatedScanRig,
    *,
    start: MachineState | None = None,
    second_looks: int = 1,
    capture_s: float = DEFAULT_CAPTURE_S,
) -> KindScan:
    """:func:`run_scan` on a simulated rig (its parts' state must match ``start``)."""
    start = start or MachineState(0, rig.parts)
    if start.parts != rig.parts:
        raise PlanError(f"the rig's parts are at {rig.parts}, not at {start.parts}")
    return await run_scan(
        rig.mechanism,
        rig.act,
        rig.capture,
        rig.sites,
        camera=rig.camera,
        start=start,
        second_looks=second_looks,
        capture_s=capture_s,
    )
