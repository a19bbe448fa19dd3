/*
 * proto.h - the firmware side of the cuberobot protocol (PROTOCOL.md sections 3-7).
 *
 * Plain C99 with no AVR dependency: the board build links it with avr/ (UART, step timer,
 * non-volatile counters); the test suite links it with a host fake of the same hooks.
 *
 * The core owns the session, the sequence window, the move queue, the state machine and the
 * non-volatile move counters' meaning.  It never touches hardware: it calls the hal_* hooks
 * below, which the platform implements.  Everything is statically sized; nothing allocates.
 *
 *   bytes ──► fw_rx_byte() ──► frames ──► session / sequenced / realtime handling ──► replies
 *   fw_poll(now) ──► watchdog, periodic STATUS, homing timer, group completion and start
 */
#ifndef CUBEROBOT_PROTO_H
#define CUBEROBOT_PROTO_H

#include <stdint.h>

#include "wire.h"

#define FW_PROTOCOL_VERSION 2u
#define FW_VERSION_MAJOR 1u
#define FW_VERSION_MINOR 0u
#define FW_VERSION_PATCH 0u
/* IDENT boot_flags bit 0: this boot found no valid non-volatile counters (a cold power-up, or
 * memory lost): they started at zero (PROTOCOL.md section 5) */
#define FW_BOOT_COUNTERS_LOST 0x01u
#define FW_MOTOR_CODES 6u       /* face codes U R F D L B = 0..5 */
#define FW_MAX_MOVES_FRAME 36u  /* most moves a MOVES payload can carry */
#define FW_QUEUE_MAX 32u        /* upper bound of fw_config.queue_depth */
#define FW_NAK_HOLDOFF_MS 20u
#define FW_NO_MOTOR 0xFFu
#define FW_MOVE_SIMULTANEOUS 0x01u
#define FW_MOVE_DEPTH_MASK 0x1Eu /* gripper layers - 1: no depth actuator here, refused */
#define FW_MOVE_RESERVED 0xE0u   /* reserved flag bits: a frame with one is malformed */

enum fw_msg_type {
    MSG_HELLO = 0x01, MSG_MOVES = 0x02, MSG_HOME = 0x03, MSG_ENABLE = 0x04, MSG_CLEAR = 0x05,
    MSG_ESTOP = 0x10, MSG_HOLD = 0x11, MSG_RESUME = 0x12, MSG_STATUS_REQUEST = 0x13,
    MSG_HEARTBEAT = 0x14,
    MSG_IDENT = 0x81, MSG_ACK = 0x82, MSG_NAK = 0x83, MSG_EXECUTED = 0x84, MSG_STATUS = 0x85,
    MSG_ERROR = 0x86
};

enum fw_state {
    FW_IDLE = 0, FW_RUNNING = 1, FW_HOLD = 2, FW_STOPPED = 3, FW_FAULT = 4, FW_HOMING = 5
};

enum fw_error {
    ERR_NONE = 0, ERR_STALL = 1, ERR_DRIVER_FAULT = 2, ERR_LIMIT = 3, ERR_WATCHDOG = 4,
    ERR_ESTOP = 5
};

enum fw_nak {
    NAK_CORRUPT = 1, NAK_SEQ_GAP = 2, NAK_NO_SESSION = 3, NAK_QUEUE_FULL = 4, NAK_BAD_MOVE = 5,
    NAK_BAD_GROUP = 6, NAK_MOVE_GAP = 7, NAK_STOPPED = 8, NAK_BUSY = 9, NAK_UNKNOWN_TYPE = 10,
    NAK_BAD_PAYLOAD = 11
};

/* One queued move; its index is implied by its place in the queue. */
struct fw_move {
    uint8_t motor;
    int8_t quarter_turns;
    uint8_t flags;
};

/* The three counters PROTOCOL.md section 5 keeps in non-volatile memory. */
struct fw_counters {
    uint32_t last_received;
    uint32_t started_upto;
    uint32_t last_executed;
};

/* Compile-time facts of a board, handed to fw_init. */
struct fw_config {
    uint8_t present_mask;      /* motors that exist on this board (bit i = face code i) */
    uint8_t queue_depth;       /* 2 .. FW_QUEUE_MAX */
    uint8_t max_batch;         /* 1 .. FW_MAX_MOVES_FRAME */
    uint16_t watchdog_ms;      /* default when HELLO asks for 0 */
    uint16_t status_period_ms;
    uint16_t home_ms;          /* how long HOME keeps the drivers settling */
};

struct fw {
    const struct fw_config *cfg;
    struct fw_counters *nv;
    uint32_t boot_id;
    uint32_t boot_ms;
    uint8_t boot_flags; /* IDENT's boot_flags: FW_BOOT_COUNTERS_LOST (set by the board) */
    struct wire_rx rx;
    uint8_t state;
    uint8_t error;
    uint8_t error_motor;
    uint8_t hold;
    uint8_t stop_after_group;
    uint8_t homed;
    uint8_t enabled_mask;
    uint16_t tx_seq;
    /* session */
    uint8_t session;
    uint8_t nak_valid;
    uint16_t expected_seq;
    uint16_t session_watchdog_ms;
    uint16_t nak_expected;
    uint32_t nonce;
    uint32_t last_rx_ms;
    uint32_t nak_at_ms;
    uint32_t next_status_ms;
    uint32_t home_until_ms;
    /* the queue (ring) and the group in progress */
    struct fw_move queue[FW_QUEUE_MAX];
    uint8_t q_head;
    uint8_t q_count;
    uint8_t group_active;
    uint32_t group_first;
    uint32_t group_last;
    /* statistics */
    uint16_t frames_rx;
    uint16_t corrupt_rx;
    uint16_t tx_dropped;
};

/* --- hooks the platform implements ------------------------------------------------------- */

/* Queue bytes for the UART; returns 0 (and sends nothing) when they do not all fit. */
uint8_t hal_tx(const uint8_t *data, uint16_t n);
/* Start a group of 1 or 2 moves (opposite faces) now; DIR is set before the first step. */
void hal_motion_start(const struct fw_move *moves, uint8_t n);
/*
 * Nonzero while the group's motors step or settle.  A group the platform halted on its own
 * (the e-stop input) must keep reading as busy until hal_motion_stop(): the core takes "not
 * busy" for "completed" and would otherwise count an interrupted move as executed.
 */
uint8_t hal_motion_busy(void);
/* Stop every motor at once (e-stop); the group in progress is abandoned mid-turn. */
void hal_motion_stop(void);
/* Energise the drivers in mask (bit i = face code i), release the others. */
void hal_drivers(uint8_t mask);
/* The counters changed: make them durable (recompute the guard of the .noinit copy). */
void hal_nv_commit(void);
/* Nonzero while the hardware e-stop input is asserted. */
uint8_t hal_estop_active(void);

/* --- the core ---------------------------------------------------------------------------- */

void fw_init(struct fw *fw, const struct fw_config *cfg, struct fw_counters *nv,
             uint32_t boot_id, uint32_t now_ms);
/* Send the boot announcement (IDENT with nonce 0). */
void fw_announce(struct fw *fw);
void fw_rx_byte(struct fw *fw, uint8_t byte, uint32_t now_ms);
void fw_poll(struct fw *fw, uint32_t now_ms);
/* The hardware e-stop input fired (the platform has already stopped the motors). */
void fw_estop(struct fw *fw, uint32_t now_ms);
uint8_t fw_queue_free(const struct fw *fw);

#endif
