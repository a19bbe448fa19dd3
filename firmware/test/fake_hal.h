/*
 * fake_hal.h - the protocol core's hooks for the host build: the UART is a list of decoded
 * frames, the motors are a flag the test clears to "finish" a group.
 */
#ifndef CUBEROBOT_FAKE_HAL_H
#define CUBEROBOT_FAKE_HAL_H

#include <stdint.h>

#include "../core/proto.h"

#define FAKE_MAX_FRAMES 64

struct fake_frame {
    uint8_t type;
    uint16_t seq;
    uint8_t len;
    uint8_t payload[WIRE_MAX_PAYLOAD];
    uint16_t wire_len;
    uint8_t wire[WIRE_MAX_ENCODED + 1];
};

struct fake_hal {
    struct fake_frame frames[FAKE_MAX_FRAMES];
    int n_frames;
    uint8_t tx_full;        /* make hal_tx refuse */
    uint8_t busy;           /* a group is "moving" */
    int starts;             /* hal_motion_start calls */
    int stops;
    struct fw_move last_group[2];
    uint8_t last_n;
    uint8_t drivers;
    uint8_t estop_input;
    int commits;
};

extern struct fake_hal fake;

void fake_reset(void);
/* The last frame of a type sent since fake_reset, or NULL. */
const struct fake_frame *fake_last(uint8_t type);
int fake_count(uint8_t type);

#endif
