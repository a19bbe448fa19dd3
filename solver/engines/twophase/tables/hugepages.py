"""Private copies of the search's hottest tables in transparent huge pages.

The phase-1 search reads its tables at random (one or two cache misses per node, tens of MB):
with the cache files' 4 kB pages nearly every such read also misses the TLB and walks the page
table. A copy in anonymous memory advised ``MADV_HUGEPAGE`` is mapped with 2 MB pages where the
kernel has them (``/sys/kernel/mm/transparent_hugepage/enabled`` set to ``always`` or
``madvise``), so the same reads need about 500 times fewer TLB entries. The price is private
memory (the copies are not shared between processes like the cache files' pages) and the copy
at load (a few tens of ms); where the advice is unknown or refused the copy still works, with
ordinary pages.
"""

from __future__ import annotations

import logging
import mmap

import numpy as np

from solver.engines.twophase.tables.cache import Array

__all__ = ["HUGE_PAGE", "huge_page_copy"]

log = logging.getLogger(__name__)

#: the transparent huge page size on x86-64 and most arm64 kernels
HUGE_PAGE = 2 << 20


def huge_page_copy(arr: Array) -> Array:
    """A read-only copy of ``arr`` in memory advised to use huge pages (``arr`` itself where
    the platform has no ``MADV_HUGEPAGE``)."""
    advice = getattr(mmap, "MADV_HUGEPAGE", None)
    if advice is None:
        return arr
    size = -(-arr.nbytes // HUGE_PAGE) * HUGE_PAGE
    # private: a shared anonymous map is shmem, which gets huge pages only if shmem_enabled says so
    region = mmap.mmap(-1, size + HUGE_PAGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    start = int(np.frombuffer(region, dtype=np.uint8, count=1).ctypes.data)
    offset = -start % HUGE_PAGE  # the first 2 MB boundary: whole huge pages from there
    try:
        region.madvise(advice, offset, size)
    except OSError as exc:
        log.debug("no huge pages for a %d-byte table: %s", arr.nbytes, exc)
    out: Array = np.frombuffer(region, dtype=arr.dtype, count=arr.size, offset=offset)
    out = out.reshape(arr.shape)
    out[...] = arr
    out.flags.writeable = False
    return out
