/*
 * motion.c - Timer1 step generator with trapezoidal acceleration (see motion.h).
 *
 * Timer1 runs free at F_CPU / 8 (2 MHz on a 16 MHz board: 0.5 us ticks, 32.8 ms per wrap).
 * The ramp table (ramp.h, generated for the board by tools/gen_ramp.c) holds the interval
 * before step n of an acceleration from rest, t(n+1) - t(n) with t(n) = sqrt(2 n / a), rounded
 * up to whole ticks and never shorter than the cruise interval of the maximum speed.
 */
#include "motion.h"

#include <avr/interrupt.h>
#include <avr/pgmspace.h>
#include <util/atomic.h>

#include "board.h"
#include "pins.h"
#include "ramp.h"

#define PHASE_IDLE 0u
#define PHASE_STEPPING 1u
#define PHASE_SETTLING 2u
#define START_LEAD_TICKS 64u /* arm the first compare this far ahead of "now" */
#define SETTLE_TICKS ((uint16_t)(BOARD_SETTLE_US * (BOARD_F_CPU / 8u / 1000000u)))

struct pin {
    volatile uint8_t *port;
    uint8_t mask;
};

struct channel {
    volatile uint8_t *step_port;
    uint8_t step_mask;
    uint8_t phase;
    uint16_t done;
    uint16_t total;
};

#define PIN_ENTRY(...) {&PIN_PORT(__VA_ARGS__), PIN_MASK(__VA_ARGS__)}
#define NO_PIN {0, 0}

static const struct pin step_pins[6] = {
#ifdef M0_STEP
    PIN_ENTRY(M0_STEP),
#else
    NO_PIN,
#endif
#ifdef M1_STEP
    PIN_ENTRY(M1_STEP),
#else
    NO_PIN,
#endif
#ifdef M2_STEP
    PIN_ENTRY(M2_STEP),
#else
    NO_PIN,
#endif
#ifdef M3_STEP
    PIN_ENTRY(M3_STEP),
#else
    NO_PIN,
#endif
#ifdef M4_STEP
    PIN_ENTRY(M4_STEP),
#else
    NO_PIN,
#endif
#ifdef M5_STEP
    PIN_ENTRY(M5_STEP),
#else
    NO_PIN,
#endif
};

static const struct pin dir_pins[6] = {
#ifdef M0_DIR
    PIN_ENTRY(M0_DIR),
#else
    NO_PIN,
#endif
#ifdef M1_DIR
    PIN_ENTRY(M1_DIR),
#else
    NO_PIN,
#endif
#ifdef M2_DIR
    PIN_ENTRY(M2_DIR),
#else
    NO_PIN,
#endif
#ifdef M3_DIR
    PIN_ENTRY(M3_DIR),
#else
    NO_PIN,
#endif
#ifdef M4_DIR
    PIN_ENTRY(M4_DIR),
#else
    NO_PIN,
#endif
#ifdef M5_DIR
    PIN_ENTRY(M5_DIR),
#else
    NO_PIN,
#endif
};

static const struct pin enable_pins[6] = {
#ifdef M0_EN
    PIN_ENTRY(M0_EN),
#else
    NO_PIN,
#endif
#ifdef M1_EN
    PIN_ENTRY(M1_EN),
#else
    NO_PIN,
#endif
#ifdef M2_EN
    PIN_ENTRY(M2_EN),
#else
    NO_PIN,
#endif
#ifdef M3_EN
    PIN_ENTRY(M3_EN),
#else
    NO_PIN,
#endif
#ifdef M4_EN
    PIN_ENTRY(M4_EN),
#else
    NO_PIN,
#endif
#ifdef M5_EN
    PIN_ENTRY(M5_EN),
#else
    NO_PIN,
#endif
};

static struct channel channels[2];
static volatile uint8_t settled; /* a channel went idle since motion_settled() last looked */
/* The e-stop interrupt stopped a group the core has not yet been told about (see motion.h). */
static volatile uint8_t aborted;

/* The port's DDR register sits one address below its PORT register on every AVR. */
static void make_output(const struct pin *pin)
{
    if (pin->port) {
        *(pin->port - 1) |= pin->mask;
    }
}

static void write_pin(const struct pin *pin, uint8_t high)
{
    if (!pin->port) {
        return;
    }
    ATOMIC_BLOCK(ATOMIC_RESTORESTATE)
    {
        if (high) {
            *pin->port |= pin->mask;
        } else {
            *pin->port &= (uint8_t)~pin->mask;
        }
    }
}

void motion_init(void)
{
    for (uint8_t m = 0; m < 6; m++) {
        write_pin(&step_pins[m], 0);
        make_output(&step_pins[m]);
        make_output(&dir_pins[m]);
        write_pin(&enable_pins[m], BOARD_ENABLE_ACTIVE_LOW);
        make_output(&enable_pins[m]);
    }
    TCCR1A = 0;
    TCCR1B = (uint8_t)(1u << CS11); /* normal mode, clk / 8 */
    TIMSK1 = 0;
}

void motion_drivers(uint8_t mask)
{
    /* Enable first, release second: a shared enable pin stays on if any motor wants it. */
    for (uint8_t m = 0; m < 6; m++) {
        if (mask & (1u << m)) {
            write_pin(&enable_pins[m], !BOARD_ENABLE_ACTIVE_LOW);
        }
    }
    for (uint8_t m = 0; m < 6; m++) {
        const struct pin *pin = &enable_pins[m];
        uint8_t shared = 0;
        for (uint8_t o = 0; o < 6; o++) {
            shared |= (uint8_t)((mask & (1u << o)) && enable_pins[o].port == pin->port &&
                                enable_pins[o].mask == pin->mask);
        }
        if (!(mask & (1u << m)) && !shared) {
            write_pin(pin, BOARD_ENABLE_ACTIVE_LOW);
        }
    }
}

static inline __attribute__((always_inline)) uint16_t interval(uint16_t done, uint16_t total)
{
    uint16_t left = (uint16_t)(total - 1u - done);
    uint16_t r = done < left ? done : left;
    return r < RAMP_LEN ? pgm_read_word(&ramp_ticks[r]) : CRUISE_TICKS;
}

void motion_start(const struct fw_move *moves, uint8_t n)
{
    for (uint8_t i = 0; i < n; i++) {
        const struct fw_move *mv = &moves[i];
        int8_t turns = mv->quarter_turns;
        uint8_t clockwise = turns > 0;
        uint8_t level = (uint8_t)(clockwise ^ ((BOARD_DIR_INVERT_MASK >> mv->motor) & 1u));
        write_pin(&dir_pins[mv->motor], level);
        struct channel *c = &channels[i];
        c->step_port = step_pins[mv->motor].port;
        c->step_mask = step_pins[mv->motor].mask;
        c->done = 0;
        c->total = (uint16_t)((turns < 0 ? -turns : turns) * STEPS_PER_QUARTER);
    }
    ATOMIC_BLOCK(ATOMIC_RESTORESTATE)
    {
        uint16_t first = (uint16_t)(TCNT1 + START_LEAD_TICKS + pgm_read_word(&ramp_ticks[0]));
        uint8_t enable = 0;
        OCR1A = first;
        OCR1B = first;
        TIFR1 = (uint8_t)((1u << OCF1A) | (1u << OCF1B));
        for (uint8_t i = 0; i < n; i++) {
            channels[i].phase = PHASE_STEPPING;
            enable |= (uint8_t)(1u << (OCIE1A + i));
        }
        TIMSK1 |= enable;
    }
}

uint8_t motion_busy(void)
{
    uint8_t busy;
    ATOMIC_BLOCK(ATOMIC_RESTORESTATE)
    {
        busy = (uint8_t)(channels[0].phase | channels[1].phase | aborted);
    }
    return busy;
}

uint8_t motion_settled(void)
{
    uint8_t was = settled;
    settled = 0;
    return was;
}

static void halt_channels(void)
{
    TIMSK1 &= (uint8_t)~((1u << OCIE1A) | (1u << OCIE1B));
    for (uint8_t i = 0; i < 2; i++) {
        struct channel *c = &channels[i];
        if (c->phase && c->step_port) {
            *c->step_port &= (uint8_t)~c->step_mask;
        }
        c->phase = PHASE_IDLE;
    }
}

void motion_abort(void)
{
    halt_channels();
    aborted = 1;
}

void motion_stop(void)
{
    ATOMIC_BLOCK(ATOMIC_RESTORESTATE)
    {
        halt_channels();
        aborted = 0;
    }
}

/*
 * One compare match of a channel.  STEP goes high at entry and low at exit: the pulse is as
 * wide as the interval computation (at least 2 us, checked by the emulator tests).
 */
static inline __attribute__((always_inline)) uint16_t channel_fire(struct channel *c,
                                                                   uint8_t ocie)
{
    if (c->phase != PHASE_STEPPING) {
        c->phase = PHASE_IDLE;
        TIMSK1 &= (uint8_t)~ocie;
        settled = 1;
        return 0;
    }
    *c->step_port |= c->step_mask;
    uint16_t done = ++c->done;
    uint16_t next;
    if (done == c->total) {
        c->phase = PHASE_SETTLING;
        next = SETTLE_TICKS;
    } else {
        next = interval(done, c->total);
    }
    __builtin_avr_delay_cycles(STEP_PULSE_PAD_CYCLES);
    *c->step_port &= (uint8_t)~c->step_mask;
    return next;
}

ISR(TIMER1_COMPA_vect)
{
    OCR1A += channel_fire(&channels[0], (uint8_t)(1u << OCIE1A));
}

ISR(TIMER1_COMPB_vect)
{
    OCR1B += channel_fire(&channels[1], (uint8_t)(1u << OCIE1B));
}
