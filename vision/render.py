"""The simulated camera: renders a virtual cube as a robot's camera would see it.

Two kinds of view, both true perspective projections of the cube's 3D geometry
(:mod:`solver.cube.geometry`, axes +x→R, +y→U, +z→F, cube spanning [-N, N] in doubled units):

* :func:`render_face` — one face head-on, shown as it lies on the usual unfolded net (its top
  edge at the top of the image), as in robots with a camera per face or a flipper;
* :func:`render_corner` — a corner view showing three faces at once (as in 6-motor robots whose
  two cameras look at opposite corners, e.g. ``"URF"`` and ``"DLB"``).

The picture: stickers with rounded corners on a black body, in front of a cluttered background;
light that is uneven (a gradient across the image, and each face lit by how it faces the
light) and coloured (a light colour plus a per-image white-balance shift), specular glare spots,
sensor noise and blur. Everything is drawn from :class:`RenderParams`; :func:`sample_params`
draws a random parameter set from the lighting range for a given severity. All randomness comes
from the ``numpy.random.Generator`` passed in, so a seed reproduces an image exactly.

Every render also returns the ground truth: where each sticker's centre and outline fell in the
image (:class:`RenderedView.sites`), which is a ready-made robot-mode calibration for that view.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import cv2
import numpy as np
import numpy.typing as npt

from solver.cube.facelets import COLOUR_RGB, DEFAULT_SCHEME, ColourScheme, Cube
from solver.cube.geometry import FACE_FRAMES, Face, sticker_positions
from vision.calibration import StickerSite

__all__ = [
    "CORNER_VIEWS",
    "DEFAULT_STICKER_RGB",
    "RenderParams",
    "RenderedView",
    "render_corner",
    "render_corner_view",
    "render_face",
    "render_face_view",
    "sample_params",
]

UInt8Image = npt.NDArray[np.uint8]
FloatArray = npt.NDArray[np.float64]

#: Physical sticker colours (sRGB) used by the renderer, per colour name: real stickers are
#: not the display colours of :data:`solver.cube.facelets.COLOUR_RGB` (white is off-white, etc.).
DEFAULT_STICKER_RGB: dict[str, tuple[int, int, int]] = {
    "white": (232, 234, 230),
    "yellow": (246, 214, 30),
    "green": (20, 160, 80),
    "blue": (10, 80, 185),
    "red": (190, 20, 45),
    "orange": (250, 110, 20),
}

#: The corner views a 6-motor robot's cameras take: each shows the three faces named.
CORNER_VIEWS: tuple[str, ...] = ("URF", "UFL", "ULB", "UBR", "DFR", "DLF", "DBL", "DRB")

_BODY_LINEAR = 0.012  # reflectance of the black plastic


@dataclass(frozen=True, slots=True)
class RenderParams:
    """Everything that shapes a rendered image (defaults: a clean, evenly lit shot)."""

    width: int = 640
    height: int = 480
    #: Width of the cube (head-on) as a fraction of the image height.
    scale: float = 0.6
    #: Camera distance from the cube centre in cube half-widths (smaller = more perspective).
    distance: float = 8.0
    yaw_deg: float = 0.0
    pitch_deg: float = 0.0
    roll_deg: float = 0.0
    #: Shift of the cube in the image, as fractions of width and height.
    offset: tuple[float, float] = (0.0, 0.0)
    sticker_gap: float = 0.09  # fraction of a cell left black around each sticker
    corner_radius: float = 0.22  # of a sticker's half-size
    exposure: float = 1.0
    #: Colour of the light / white-balance gains on linear R, G, B.
    light_rgb: tuple[float, float, float] = (1.0, 1.0, 1.0)
    #: Brightness change across the image (0 = even) and its direction.
    gradient: float = 0.0
    gradient_angle_deg: float = 0.0
    #: Direction the light comes from (camera frame: x right, y up, z towards the camera).
    light_dir: tuple[float, float, float] = (0.3, 0.5, 1.0)
    ambient: float = 0.55  # share of light that does not depend on a face's direction
    glare_spots: int = 0
    glare_strength: float = 1.2
    glare_radius: float = 0.03  # fraction of the image height
    noise_sigma: float = 1.5  # sRGB units (0..255)
    blur_sigma: float = 0.0  # pixels
    clutter_items: int = 25
    sticker_variation: float = 0.03  # relative per-sticker reflectance spread
    sticker_rgb: Mapping[str, tuple[int, int, int]] = field(
        default_factory=lambda: dict(DEFAULT_STICKER_RGB)
    )

    def __post_init__(self) -> None:
        if self.width < 16 or self.height < 16:
            raise ValueError(f"image size {self.width}x{self.height} is too small (min 16x16)")
        if not 0 < self.scale <= 1.5:
            raise ValueError(f"scale must be in (0, 1.5], got {self.scale}")
        if self.distance <= 2.0:
            raise ValueError(f"camera distance {self.distance} is inside the cube (min 2)")


@dataclass(frozen=True, slots=True)
class RenderedView:
    """A rendered BGR image and where every visible sticker is in it."""

    image: UInt8Image
    sites: tuple[StickerSite, ...]


def sample_params(
    rng: np.random.Generator,
    severity: float = 1.0,
    *,
    base: RenderParams | None = None,
    light_rgb: tuple[float, float, float] | None = None,
) -> RenderParams:
    """A random parameter set from the lighting range; ``severity`` 0 is a clean studio shot,
    1 the worst the robot is specified for: light tinted up to ±25% per channel, exposure
    0.55-1.25, a 45% gradient, two glare spots, noise σ=5, blur σ=1.5 px, camera tilted 4°.
    ``light_rgb`` fixes the light colour (the light of a robot is the same for all its
    images; only a per-image white-balance jitter of ±3·severity % is added)."""
    if not 0.0 <= severity <= 1.0:
        raise ValueError(f"severity must be within 0..1, got {severity}")
    s = severity
    base = base or RenderParams()
    if light_rgb is None:
        light_rgb = random_light(rng, severity)
    jitter = 1.0 + rng.uniform(-0.03, 0.03, 3) * s
    light = tuple(float(v) for v in np.asarray(light_rgb) * jitter)
    return replace(
        base,
        yaw_deg=float(rng.uniform(-4, 4) * s),
        pitch_deg=float(rng.uniform(-4, 4) * s),
        roll_deg=float(rng.uniform(-4, 4) * s),
        offset=(float(rng.uniform(-0.05, 0.05) * s), float(rng.uniform(-0.05, 0.05) * s)),
        scale=float(base.scale * rng.uniform(1 - 0.1 * s, 1 + 0.1 * s)),
        exposure=float(rng.uniform(1 - 0.45 * s, 1 + 0.25 * s)),
        light_rgb=(light[0], light[1], light[2]),
        gradient=float(rng.uniform(0, 0.45) * s),
        gradient_angle_deg=float(rng.uniform(0, 360)),
        light_dir=(float(rng.uniform(-0.6, 0.6)), float(rng.uniform(-0.2, 0.8)), 1.0),
        glare_spots=int(rng.integers(0, 1 + round(2 * s))),
        noise_sigma=float(1.0 + 4.0 * s * rng.uniform(0.5, 1.0)),
        blur_sigma=float(rng.uniform(0, 1.5) * s),
        clutter_items=int(rng.integers(10, 40)),
    )


def random_light(rng: np.random.Generator, severity: float = 1.0) -> tuple[float, float, float]:
    """A light colour (linear RGB gains) within ±25·severity % per channel, green fixed."""
    r, b = 1.0 + rng.uniform(-0.25, 0.25, 2) * severity
    return (float(r), 1.0, float(b))


# ---------------------------------------------------------------------------------------------
# Camera


@dataclass(frozen=True, slots=True)
class _Camera:
    eye: FloatArray
    right: FloatArray
    up: FloatArray
    forward: FloatArray
    focal: float
    cx: float
    cy: float

    def project(self, points: FloatArray) -> FloatArray:
        d = points - self.eye
        zc = d @ self.forward
        u = self.cx + self.focal * (d @ self.right) / zc
        v = self.cy - self.focal * (d @ self.up) / zc
        result: FloatArray = np.stack([u, v], axis=-1)
        return result


def _rotate(v: FloatArray, axis: FloatArray, angle_deg: float) -> FloatArray:
    a = math.radians(angle_deg)
    k = axis / np.linalg.norm(axis)
    result: FloatArray = (
        v * math.cos(a) + np.cross(k, v) * math.sin(a) + k * (k @ v) * (1 - math.cos(a))
    )
    return result


def _camera(n: int, params: RenderParams, look: FloatArray, up_hint: FloatArray) -> _Camera:
    forward = -look / np.linalg.norm(look)
    right = np.cross(forward, up_hint)
    right /= np.linalg.norm(right)
    up = np.cross(right, forward)
    # Jitter: yaw about up, pitch about right, roll about forward.
    forward = _rotate(forward, up, params.yaw_deg)
    right = _rotate(right, up, params.yaw_deg)
    forward = _rotate(forward, right, params.pitch_deg)
    up = _rotate(up, right, params.pitch_deg)
    right = _rotate(right, forward, params.roll_deg)
    up = _rotate(up, forward, params.roll_deg)
    dist = params.distance * n
    eye = -forward * dist
    # Focal length such that a head-on face (width 2N at distance dist - N) spans scale·height.
    focal = params.scale * params.height * (dist - n) / (2 * n)
    cx = params.width / 2 + params.offset[0] * params.width
    cy = params.height / 2 + params.offset[1] * params.height
    return _Camera(eye, right, up, forward, focal, cx, cy)


# ---------------------------------------------------------------------------------------------
# Drawing


def _to_linear(rgb: Sequence[float] | FloatArray) -> FloatArray:
    c = np.asarray(rgb, dtype=np.float64) / 255.0
    result: FloatArray = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    return result


def _rounded_square(half: float, radius: float, per_corner: int = 6) -> FloatArray:
    """Outline of a rounded square centred at 0 (2D points, counter-clockwise)."""
    pts = []
    inner = half - radius
    for cx, cy, start in (
        (inner, inner, 0),
        (-inner, inner, 90),
        (-inner, -inner, 180),
        (inner, -inner, 270),
    ):
        for k in range(per_corner + 1):
            a = math.radians(start + 90 * k / per_corner)
            pts.append((cx + radius * math.cos(a), cy + radius * math.sin(a)))
    return np.array(pts)


def _fill(
    image: npt.NDArray[np.float32], poly: FloatArray, colour: Sequence[float] | FloatArray
) -> None:
    shift = 4
    pts = np.round(poly * (1 << shift)).astype(np.int32).reshape(-1, 1, 2)
    cv2.fillPoly(image, [pts], tuple(float(c) for c in colour), lineType=cv2.LINE_AA, shift=shift)


def _background(params: RenderParams, rng: np.random.Generator) -> npt.NDArray[np.float32]:
    h, w = params.height, params.width
    base = _to_linear(rng.uniform(60, 200, 3))
    img = np.empty((h, w, 3), dtype=np.float32)
    img[:] = base
    for _ in range(params.clutter_items):
        colour = _to_linear(rng.uniform(0, 255, 3))
        kind = int(rng.integers(3))
        x, y = int(rng.integers(0, w)), int(rng.integers(0, h))
        size = int(rng.uniform(0.03, 0.3) * h)
        c = tuple(float(v) for v in colour)
        if kind == 0:
            cv2.rectangle(img, (x, y), (x + size, y + int(size * rng.uniform(0.2, 2))), c, -1)
        elif kind == 1:
            cv2.circle(img, (x, y), max(size // 2, 2), c, -1)
        else:
            x2, y2 = int(rng.integers(0, w)), int(rng.integers(0, h))
            cv2.line(img, (x, y), (x2, y2), c, max(2, size // 8))
    return img


def _render(
    cube: Cube,
    faces: Sequence[Face],
    camera: _Camera,
    params: RenderParams,
    rng: np.random.Generator,
    scheme: ColourScheme,
) -> RenderedView:
    n = cube.n
    img = _background(params, rng)
    pos = sticker_positions(n).astype(np.float64)
    half = 1.0 - params.sticker_gap
    outline = _rounded_square(half, params.corner_radius * half)
    light_dir = np.asarray(params.light_dir, dtype=np.float64)
    light_dir /= np.linalg.norm(light_dir)
    sticker_lin = {name: _to_linear(rgb) for name, rgb in params.sticker_rgb.items()}
    sites: list[StickerSite] = []
    face_gain = np.ones((params.height, params.width), dtype=np.float32)
    for face in faces:
        normal, right, up = (np.asarray(v, dtype=np.float64) for v in FACE_FRAMES[face])
        # Lambert shading of this face, with the light direction given in the camera frame.
        to_light = (
            light_dir[0] * camera.right + light_dir[1] * camera.up - light_dir[2] * camera.forward
        )
        shade = params.ambient + (1 - params.ambient) * max(0.0, float(normal @ to_light))
        body = np.array(
            [
                normal * n + right * a * n + up * b * n
                for a, b in ((-1, -1), (1, -1), (1, 1), (-1, 1))
            ]
        )
        body_poly = camera.project(body)
        _fill(img, body_poly, [_BODY_LINEAR] * 3)
        mask = np.zeros((params.height, params.width), dtype=np.uint8)
        cv2.fillConvexPoly(mask, np.round(body_poly).astype(np.int32), 1)
        face_gain[mask > 0] = shade
        for row in range(n):
            for col in range(n):
                centre = pos[face, row, col] + normal * 0.001
                pts3 = centre + outline[:, :1] * right + outline[:, 1:] * up
                poly = camera.project(pts3)
                colour_name = scheme.colours[int(cube.stickers[face, row, col])]
                refl = sticker_lin[colour_name] * (1 + rng.normal(0, params.sticker_variation, 3))
                _fill(img, poly, np.clip(refl, 0, 1))
                quad3 = centre + np.array(
                    [[-half, half], [half, half], [half, -half], [-half, -half]]
                ) @ np.stack([right, up])
                quad = camera.project(quad3)
                c2 = camera.project(centre[None, :])[0]
                sites.append(
                    StickerSite(
                        face,
                        row,
                        col,
                        (float(c2[0]), float(c2[1])),
                        tuple((float(p[0]), float(p[1])) for p in quad),
                    )
                )
    # Illumination: exposure × light colour × (gradient across the image) × face shading.
    h, w = params.height, params.width
    a = math.radians(params.gradient_angle_deg)
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    ramp = ((xs - w / 2) * math.cos(a) + (ys - h / 2) * math.sin(a)) / max(w, h)
    field_ = params.exposure * (1 + params.gradient * 2 * ramp) * face_gain
    img *= field_[:, :, None]
    img *= np.asarray(params.light_rgb, dtype=np.float32)[None, None, :]
    for _ in range(params.glare_spots):
        gx, gy = rng.uniform(0.3, 0.7) * w, rng.uniform(0.3, 0.7) * h
        radius = params.glare_radius * h * rng.uniform(0.5, 1.5)
        spot = np.exp(-((xs - gx) ** 2 + (ys - gy) ** 2) / (2 * radius**2))
        img += (params.glare_strength * spot)[:, :, None]
    np.clip(img, 0, 1, out=img)
    srgb = np.where(img <= 0.0031308, 12.92 * img, 1.055 * np.power(img, 1 / 2.4) - 0.055) * 255
    if params.blur_sigma > 0.05:
        srgb = cv2.GaussianBlur(srgb, (0, 0), params.blur_sigma)
    if params.noise_sigma > 0:
        srgb += rng.normal(0, params.noise_sigma, srgb.shape).astype(np.float32)
    out = np.clip(srgb, 0, 255).astype(np.uint8)
    bgr: UInt8Image = np.ascontiguousarray(out[:, :, ::-1])
    return RenderedView(bgr, tuple(sites))


def render_face_view(
    cube: Cube,
    face: Face,
    params: RenderParams | None = None,
    rng: np.random.Generator | None = None,
    *,
    scheme: ColourScheme = DEFAULT_SCHEME,
) -> RenderedView:
    """One face head-on, its top edge (as on the unfolded net) at the top of the image."""
    params = params or RenderParams()
    rng = rng if rng is not None else np.random.default_rng(0)
    normal, _, up = (np.asarray(v, dtype=np.float64) for v in FACE_FRAMES[face])
    camera = _camera(cube.n, params, normal, up)
    return _render(cube, [face], camera, params, rng, scheme)


def render_face(
    cube: Cube,
    face: Face,
    params: RenderParams | None = None,
    rng: np.random.Generator | None = None,
    *,
    scheme: ColourScheme = DEFAULT_SCHEME,
) -> UInt8Image:
    """The BGR image of :func:`render_face_view`."""
    return render_face_view(cube, face, params, rng, scheme=scheme).image


def corner_faces(corner: str) -> tuple[Face, Face, Face]:
    """The three faces a corner view shows, e.g. ``"URF"`` → (U, R, F)."""
    key = corner.upper()
    faces = tuple(Face[c] for c in key) if len(key) == 3 and set(key) <= set("URFDLB") else ()
    normals = [np.asarray(FACE_FRAMES[f][0]) for f in faces]
    if len(faces) != 3 or np.linalg.matrix_rank(np.array(normals)) != 3 or len(set(faces)) != 3:
        raise ValueError(f"{corner!r} is not a corner: name three adjacent faces, e.g. URF or DLB")
    return (faces[0], faces[1], faces[2])


def render_corner_view(
    cube: Cube,
    corner: str = "URF",
    params: RenderParams | None = None,
    rng: np.random.Generator | None = None,
    *,
    scheme: ColourScheme = DEFAULT_SCHEME,
) -> RenderedView:
    """Three faces in perspective, seen from the direction of ``corner`` (e.g. ``"URF"``)."""
    params = params or RenderParams()
    rng = rng if rng is not None else np.random.default_rng(0)
    faces = corner_faces(corner)
    look = sum(np.asarray(FACE_FRAMES[f][0], dtype=np.float64) for f in faces)
    vertical = next(f for f in faces if f in (Face.U, Face.D))
    up_hint = np.asarray(FACE_FRAMES[vertical][0], dtype=np.float64)
    if vertical is Face.D:
        up_hint = -up_hint
    # A corner view sees the cube's diagonal (√3 times a face width): shrink accordingly.
    scaled = replace(params, scale=params.scale / math.sqrt(3) * 1.15)
    camera = _camera(cube.n, scaled, np.asarray(look), up_hint)
    return _render(cube, list(faces), camera, scaled, rng, scheme)


def render_corner(
    cube: Cube,
    corner: str = "URF",
    params: RenderParams | None = None,
    rng: np.random.Generator | None = None,
    *,
    scheme: ColourScheme = DEFAULT_SCHEME,
) -> UInt8Image:
    """The BGR image of :func:`render_corner_view`."""
    return render_corner_view(cube, corner, params, rng, scheme=scheme).image


__all__ += ["corner_faces", "random_light"]
_ = COLOUR_RGB  # the display palette is documented next to DEFAULT_STICKER_RGB
