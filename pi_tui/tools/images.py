"""Image detection and inline-size fitting for ``read`` (pi-behaviour.md §4.2, §13.4).

Detection looks at magic bytes, never at the extension: a ``.png`` holding text is text.
Fitting follows pi 0.73.1: an image within 2000×2000 whose base64 form is below 4.5 MiB is sent
unchanged; otherwise it is scaled into 2000×2000 and at each size PNG, then JPEG at quality
80/85/70/55/40 are tried, first fit wins; then the size shrinks by 0.75 and the candidates are
tried again, down to 1×1. Pillow is imported lazily: most sessions never read an image.
"""

from __future__ import annotations

import base64
import io
from dataclasses import dataclass

MAX_IMAGE_SIDE = 2000
MAX_BASE64_BYTES = 4_718_592  # 4.5 MiB
_JPEG_QUALITIES = (80, 85, 70, 55, 40)
_SHRINK = 0.75


def detect_image_mime(head: bytes) -> str | None:
    """The MIME type of a supported image from its first bytes, or None."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if len(head) >= 12 and head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def base64_size(num_bytes: int) -> int:
    return 4 * ((num_bytes + 2) // 3)


@dataclass(frozen=True, slots=True)
class FittedImage:
    data: bytes
    mime_type: str
    original_width: int
    original_height: int
    width: int
    height: int
    was_resized: bool
    """Re-encoded to fit (pi's ``wasResized``): the note is shown even when only the encoding
    changed, so the model knows it sees a re-compressed image."""

    def base64(self) -> str:
        return base64.b64encode(self.data).decode("ascii")

    def dimension_note(self) -> str:
        scale = self.original_width / self.width if self.width else 1.0
        return (
            f"[Image: original {self.original_width}x{self.original_height}, "
            f"displayed at {self.width}x{self.height}. "
            f"Multiply coordinates by {scale:.2f} to map to original image.]"
        )


def _fits(data: bytes) -> bool:
    return base64_size(len(data)) < MAX_BASE64_BYTES


def fit_image(data: bytes, mime_type: str) -> FittedImage | None:
    """The image ready to send inline, or None when it cannot be decoded or made small enough."""
    try:
        from PIL import Image, UnidentifiedImageError
    except ImportError:  # pragma: no cover - pillow is a dependency; degrade rather than fail
        # Without an image library the size cannot be checked or changed: send what fits.
        return FittedImage(data, mime_type, 0, 0, 0, 0, False) if _fits(data) else None
    try:
        with Image.open(io.BytesIO(data)) as opened:
            width, height = opened.size
            if width <= MAX_IMAGE_SIDE and height <= MAX_IMAGE_SIDE and _fits(data):
                return FittedImage(data, mime_type, width, height, width, height, False)
            opened.load()
            image = opened.copy()
    except (UnidentifiedImageError, OSError, ValueError, Image.DecompressionBombError):
        return None
    scale = min(1.0, MAX_IMAGE_SIDE / width, MAX_IMAGE_SIDE / height)
    target_w, target_h = max(1, int(width * scale)), max(1, int(height * scale))
    while True:
        encoded = _encode_first_fit(image, target_w, target_h)
        if encoded is not None:
            out_data, out_mime = encoded
            return FittedImage(out_data, out_mime, width, height, target_w, target_h, True)
        if target_w == 1 and target_h == 1:
            return None
        target_w, target_h = max(1, int(target_w * _SHRINK)), max(1, int(target_h * _SHRINK))


def _encode_first_fit(image: object, width: int, height: int) -> tuple[bytes, str] | None:
    from PIL import Image

    assert isinstance(image, Image.Image)
    resized = image.resize((width, height), Image.Resampling.LANCZOS)
    buffer = io.BytesIO()
    png_source = resized if resized.mode in ("RGB", "RGBA", "L", "LA", "P") else resized.convert("RGBA")
    png_source.save(buffer, format="PNG", optimize=False)
    if _fits(buffer.getvalue()):
        return buffer.getvalue(), "image/png"
    rgb = resized.convert("RGB")
    for quality in _JPEG_QUALITIES:
        buffer = io.BytesIO()
        rgb.save(buffer, format="JPEG", quality=quality)
        if _fits(buffer.getvalue()):
            return buffer.getvalue(), "image/jpeg"
    return None
