/*
 * fake_hal.c - host implementation of the core's hal_* hooks (see fake_hal.h).
 */
#include "fake_hal.h"

#include <string.h>

struct fake_hal fake;

void fake_reset(void)
{
    memset(&fake, 0, sizeof fake);
}

uint8_t hal_tx(const uint8_t *data, uint16_t n)
{
    if (fake.tx_full || fake.n_frames == FAKE_MAX_FRAMES) {
        return 0;
    }
    static struct wire_rx rx;
    wire_rx_reset(&rx);
    struct fake_frame *f = &fake.frames[fake.n_frames];
    for (uint16_t i = 0; i < n; i++) {
        if (wire_rx_byte(&rx, data[i]) == WIRE_FRAME) {
            f->type = rx.type;
            f->seq = rx.seq;
            f->len = rx.len;
            memcpy(f->payload, rx.payload, rx.len);
            memcpy(f->wire, data, n);
            f->wire_len = n;
            fake.n_frames++;
        }
    }
    return 1;
}

void hal_motion_start(const struct fw_move *moves, uint8_t n)
{
    fake.starts++;
    fake.busy = 1;
    fake.last_n = n;
    memcpy(fake.last_group, moves, n * sizeof *moves);
}

uint8_t hal_motion_busy(void)
{
    return fake.busy;
}

void hal_motion_stop(void)
{
    fake.stops++;
    fake.busy = 0;
}

void hal_drivers(uint8_t mask)
{
    fake.drivers = mask;
}

void hal_nv_commit(void)
{
    fake.commits++;
}

uint8_t hal_estop_active(void)
{
    return fake.estop_input;
}

const struct fake_frame *fake_last(uint8_t type)
{
    for (int i = fake.n_frames - 1; i >= 0; i--) {
        if (fake.frames[i].type == type) {
            return &fake.frames[i];
        }
    }
    return NULL;
}

int fake_count(uint8_t type)
{
    int n = 0;
    for (int i = 0; i < fake.n_frames; i++) {
        n += fake.frames[i].type == type;
    }
    return n;
}
