"""The numbers of the wire protocol: message types, firmware states, error codes, NAK reasons and
flags (``PROTOCOL.md`` § 4 and § 6). Pure. :mod:`firmware_protocol.messages` re-exports them."""

from __future__ import annotations

from enum import IntEnum, IntFlag

__all__ = [
    "MAX_MOVE_DEPTH",
    "MOVE_DEPTH_SHIFT",
    "SEQUENCED_TYPES",
    "ErrorCode",
    "FirmwareState",
    "MessageType",
    "MoveFlags",
    "NakReason",
    "StatusFlags",
    "move_flags",
]


class MessageType(IntEnum):
    HELLO = 0x01
    MOVES = 0x02
    HOME = 0x03
    ENABLE = 0x04
    CLEAR = 0x05
    ESTOP = 0x10
    HOLD = 0x11
    RESUME = 0x12
    STATUS_REQUEST = 0x13
    HEARTBEAT = 0x14
    IDENT = 0x81
    ACK = 0x82
    NAK = 0x83
    EXECUTED = 0x84
    STATUS = 0x85
    ERROR = 0x86


#: Host frames that go through the sliding window (sequence number, ACK/NAK, retransmission).
SEQUENCED_TYPES = frozenset(
    {MessageType.MOVES, MessageType.HOME, MessageType.ENABLE, MessageType.CLEAR}
)


class FirmwareState(IntEnum):
    """The firmware's top-level state (``PROTOCOL.md`` § state machine)."""

    IDLE = 0  # nothing queued, motors still
    RUNNING = 1  # executing or holding queued moves
    HOLD = 2  # paused by HOLD after the move group in progress; queue kept
    STOPPED = 3  # after ESTOP or the watchdog; queue flushed; refuses MOVES until CLEAR/HOME
    FAULT = 4  # stall, driver fault or limit; queue flushed; refuses MOVES until CLEAR/HOME
    HOMING = 5  # running HOME


class ErrorCode(IntEnum):
    NONE = 0
    STALL = 1  # a motor did not reach its target (missed steps, jammed cube)
    DRIVER_FAULT = 2  # the stepper driver reported over-current / over-temperature
    LIMIT = 3  # a gripper limit switch tripped
    WATCHDOG = 4  # the host went quiet for longer than the watchdog timeout
    ESTOP = 5  # emergency stop (ESTOP frame or the hardware button)


class NakReason(IntEnum):
    CORRUPT = 1  # a frame failed COBS/LEN/CRC; resend from ``seq`` (= expected)
    SEQ_GAP = 2  # a frame arrived ahead of ``seq`` (= expected); resend from there
    NO_SESSION = 3  # no HELLO since boot (or the watchdog ended the session): send HELLO
    QUEUE_FULL = 4  # MOVES frame ``seq`` does not fit the queue; resend after EXECUTED
    BAD_MOVE = 5  # MOVES frame ``seq`` holds an invalid motor or turn count
    BAD_GROUP = 6  # MOVES frame ``seq`` has a simultaneous group that is not two opposite faces
    MOVE_GAP = 7  # MOVES frame ``seq`` starts after a missing move index (detail = expected)
    STOPPED = 8  # state STOPPED/FAULT refuses MOVES frame ``seq``: CLEAR or HOME first
    BUSY = 9  # HOME or ENABLE frame ``seq`` refused while moves are queued or running
    UNKNOWN_TYPE = 10  # frame ``seq`` has a type this firmware does not implement
    BAD_PAYLOAD = 11  # frame ``seq`` is intact but its payload is invalid for its type


class MoveFlags(IntFlag):
    NONE = 0
    #: This move starts together with the next one (which must be on the opposite face and in
    #: the same MOVES frame); the pair completes when both motors have finished.
    SIMULTANEOUS_WITH_NEXT = 0x01
    #: Bits 1..4: layers the motor's gripper holds, minus one (0 = the outer layer alone, as
    #: before this field existed; 15 = sixteen layers). A firmware without a depth actuator
    #: refuses a nonzero depth with NAK BAD_MOVE. Bits 5..7 are reserved (0).
    DEPTH_MASK = 0x1E


#: The lowest bit of the depth field of :class:`MoveFlags`.
MOVE_DEPTH_SHIFT = 1
#: The most layers a move's depth field can say.
MAX_MOVE_DEPTH = (int(MoveFlags.DEPTH_MASK) >> MOVE_DEPTH_SHIFT) + 1


def move_flags(*, simultaneous_with_next: bool = False, depth: int = 1) -> MoveFlags:
    """The flags byte of a move: the simultaneous bit and the gripper depth (1..16 layers)."""
    if not 1 <= depth <= MAX_MOVE_DEPTH:
        raise ValueError(f"a move's depth must be 1..{MAX_MOVE_DEPTH} layers, got {depth}")
    flags = MoveFlags((depth - 1) << MOVE_DEPTH_SHIFT)
    if simultaneous_with_next:
        flags |= MoveFlags.SIMULTANEOUS_WITH_NEXT
    return flags


class StatusFlags(IntFlag):
    NONE = 0
    HOMED = 0x01  # HOME completed since boot
    SESSION = 0x02  # a HELLO session is open (watchdog armed)
    HOLD_REQUESTED = 0x04  # HOLD is latched (state HOLD once the current group ends)
