"""Running a one-camera scan on a mechanism kind (:mod:`robot.kinds.choreography` finds the
actions and says where each sticker the camera sees belongs).

The scan (:func:`run_scan`, async, for the daemon): act and capture through callables,
sample each frame at the camera's calibrated sticker sites (:mod:`vision.locate`), place the
samples in the model by the bookkeeping, classify the whole cube (:mod:`vision.classify`),
and optionally look again at faces with doubtful stickers, combining the looks per physical
sticker position with :class:`vision.evidence.Evidence`. The result carries the read, the
evidence and the mechanism's state afterwards (orientation and parts), from which the planner
continues. :func:`simulate_scan` runs it on a virtual cube with the simulated camera
(:class:`vision.capture.SimulatedCamera`).

The read is in the caller's notation frame: the frame in which the machine's orientation at
the start is ``start.orientation`` (0: the cube as it sits in the machine when the scan begins).

A scan interrupted by a crash goes on where it stopped: every frame is handed to ``on_look``
as it is taken (:class:`TakenLook`: the view and the samples at the camera's cells; the daemon
journals it), and a later :func:`run_scan` given those looks as ``prior`` and the machine's
state then as ``start`` (in the same frame) shows only the faces they lack.

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
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from robot.errors import PlanError
from robot.kinds.choreography import (
    DEFAULT_CAPTURE_S,
    Choreography,
    Look,
    MachineState,
    UInt8Image,
    View,
    camera_grid,
    choreograph,
    default_camera,
    rotation_moves,
    view_of,
)
from robot.kinds.frames import frames
from robot.kinds.mechanism import Action, Mechanism, PartsState
from robot.kinds.simulate import replay
from solver.cube.facelets import DEFAULT_SCHEME, ColourScheme, Cube
from solver.cube.geometry import Face

if TYPE_CHECKING:  # vision (and OpenCV) load when a scan first runs
    from vision.calibration import StickerSite
    from vision.classify import Classification
    from vision.evidence import Evidence
    from vision.render import RenderParams
    from vision.scan import ScanResult

__all__ = [
    "Act",
    "Capture",
    "KindScan",
    "OnLook",
    "SimulatedScanRig",
    "TakenLook",
    "run_scan",
    "simulate_scan",
]

logger = logging.getLogger(__name__)


#: acts one action of the mechanism (returns when the machine has done it)
Act = Callable[[Action], Awaitable[None]]
#: takes one frame of the camera (BGR uint8)
Capture = Callable[[], Awaitable[UInt8Image]]


@dataclass(frozen=True, eq=False)
class TakenLook:
    """A frame taken: the view (``look.orientation``, ``look.face``, ``look.turn``; ``after``
    counts the actions of its pass before it) and the L*a*b* samples at the camera face's N²
    cells (shape ``(N², 3)``, LTR order: row 0 at the bottom)."""

    look: Look
    samples: npt.NDArray[np.float64]


#: told of every frame as soon as it is taken (e.g. to journal it, so that a scan interrupted
#: by a crash can go on from its looks: :func:`run_scan`'s ``prior``)
OnLook = Callable[[TakenLook], Awaitable[None]]


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
    #: looks taken before the scan was interrupted, used again (``run_scan``'s ``prior``)
    restored: int = 0

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
    on_look: OnLook | None = None

    def __post_init__(self) -> None:
        from vision.evidence import Evidence

        n = self.mechanism.n
        self.cells = _check_sites(self.sites, n, self.camera)
        self.current = np.full((6, n, n, 3), np.nan)
        self.evidence = Evidence(n, scheme=self.scheme)
        self.passes: list[Choreography] = []
        self.taken: list[View] = []
        #: looks taken before an interruption (placed in ``current``; evidence of the first pass)
        self.restored: list[Look] = []

    @property
    def state(self) -> MachineState:
        return self.passes[-1].end

    def restore(self, prior: Sequence[TakenLook]) -> None:
        """Place the looks an interrupted scan took (their orientations in this scan's frame)
        as if just taken; each must be the view the bookkeeping says its orientation shows."""
        n = self.mechanism.n
        for taken in prior:
            look = taken.look
            if view_of(n, look.orientation, self.camera) != (look.face, look.turn):
                raise PlanError(
                    f"a prior look of {look.face.name} turned {look.turn} is not what the camera "
                    f"at {self.camera.name} sees in orientation {look.orientation}; scan again "
                    "from the start"
                )
            self._place(look, np.asarray(taken.samples, dtype=np.float64).reshape(n * n, 3))
            self.restored.append(look)

    async def scan(self, start: MachineState | None) -> Classification:
        """The first pass: every face once (those not seen before an interruption); vision's
        read of it."""
        seen = {look.face for look in self.restored}
        chore = choreograph(
            self.mechanism,
            self.camera,
            start=start,
            faces=[f for f in Face if f not in seen],
            capture_s=self.capture_s,
        )
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
        if not self.passes:
            looks = [*self.restored, *looks]
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
                self._place(look, values)
                logger.debug("scan: %s seen turned %d", look.face.name, look.turn)
                if self.on_look is not None:
                    await self.on_look(TakenLook(look, values))
            if i < len(chore.actions):
                await self.act(chore.actions[i].action)
        return list(chore.looks)

    def _place(self, look: Look, values: npt.NDArray[np.float64]) -> None:
        """The samples of the camera's cells (LTR order) to the model stickers they show."""
        grid = camera_grid(self.mechanism.n, look.orientation, self.camera).reshape(-1)
        self.current.reshape(-1, 3)[grid] = values
        self.taken.append((look.face, look.turn))


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
    prior: Sequence[TakenLook] = (),
    on_look: OnLook | None = None,
) -> KindScan:
    """Scan the cube in ``mechanism`` with one camera.

    ``act(action)`` makes the machine do one action and returns when it is done; ``capture()``
    returns the camera's frame (BGR); ``sites`` are the camera's calibrated sticker sites (the
    N² cells of the physical face ``camera`` it looks at: a
    :class:`vision.calibration.ViewCalibration`'s sites). ``start`` is the machine's state now
    (the identity orientation and the mechanism's start by default). When the first pass is not
    sure (not accepted, or repaired), up to ``second_looks`` more passes show the faces with
    doubtful stickers again in views not taken yet, and the looks are combined.

    ``prior`` are looks a scan of the same cube took before it was interrupted, their
    orientations in the frame of ``start`` (the machine has only re-oriented the cube since):
    they count as taken, and the first pass shows only the faces they lack. ``on_look`` is
    awaited with every frame as soon as it is taken (e.g. to journal it for such a restart).

    Raises :class:`~robot.errors.PlanError` (a camera or state the mechanism cannot scan
    from), :class:`~vision.errors.CalibrationError` (``sites`` not the camera's face),
    :class:`~vision.errors.ScanInputError` / :class:`~vision.errors.NoCubeError` (frames that
    are no cube), and whatever ``act`` and ``capture`` raise.
    """
    camera = default_camera(mechanism) if camera is None else camera
    if second_looks < 0:
        raise ValueError(f"second_looks must be 0 or more, got {second_looks}")
    scanner = _Scanner(mechanism, camera, act, capture, sites, scheme, capture_s, on_look)
    scanner.restore(prior)
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
        read,
        scanner.current,
        scanner.evidence,
        tuple(scanner.passes),
        scanner.state,
        seconds,
        len(scanner.restored),
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
