"""One-camera scanning for the mechanism kinds: which actions show the camera every face, and
where each sticker the camera sees belongs in the model.

A turntable or two-gripper robot has one camera at a fixed place: it sees one *physical* face
(``camera``, :mod:`robot.kinds.frames`' physical frame) and the mechanism re-orients the cube
in front of it. Two parts here (the scan that runs them is :mod:`robot.kinds.kindscan`):

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
"""

from __future__ import annotations

import heapq
import itertools
import logging
from collections.abc import Collection
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from robot.errors import PlanError
from robot.kinds.frames import N_ORIENTATIONS, Frames, frames
from robot.kinds.gripper import TwoGripper
from robot.kinds.mechanism import Mechanism, PartsState, Step
from robot.kinds.planner import PlannedAction
from robot.kinds.turntable import Turntable
from solver.cube.facelets import sequence_permutation
from solver.cube.geometry import Face
from solver.cube.notation import Move, parse

if TYPE_CHECKING:  # vision (and OpenCV) load when a scan first runs
    pass

__all__ = [
    "DEFAULT_CAPTURE_S",
    "Choreography",
    "Look",
    "MachineState",
    "camera_grid",
    "choreograph",
    "default_camera",
    "rotation_moves",
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
