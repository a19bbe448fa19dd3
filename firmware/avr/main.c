/*
 * main.c - the AVR firmware: clocks, non-volatile counters, boot id, e-stop input, hardware
 * watchdog, and the main loop that feeds received bytes to the protocol core.
 *
 * Interrupts: Timer1 COMPA/COMPB (steps, motion.c), Timer0 COMPA (1 kHz clock), UART RX and
 * UDRE (uart.c), the e-stop pin.  None of them nests.  The main loop sleeps (idle mode) when it
 * has nothing to do; every interrupt wakes it.
 */
#include <stddef.h>

#include <avr/eeprom.h>
#include <avr/interrupt.h>
#include <avr/sleep.h>
#include <avr/wdt.h>
#include <util/atomic.h>

#include "../core/proto.h"
#include "board.h"
#include "motion.h"
#include "pins.h"
#include "uart.h"

#define NV_MAGIC 0x43524257UL /* "CRBW" */
#define EEPROM_BOOT_COUNT ((uint32_t *)0)
#define EEPROM_SEED ((uint32_t *)4) /* per-board random salt (the emulator writes one) */

/*
 * The move counters live in RAM that a reset does not clear: two slots, each guarded by a CRC
 * and numbered; a commit writes the older slot, so a reset in the middle of a commit leaves
 * the other slot (one commit older) intact.  The core works on `counters`, a plain copy.
 */
struct nv_slot {
    uint32_t magic;
    uint32_t sequence;
    struct fw_counters counters;
    uint32_t boot_id;
    uint16_t guard;
};

static struct nv_slot nv_slots[2] __attribute__((section(".noinit")));
static struct fw_counters counters;
static uint32_t boot_id;
static uint8_t nv_current;
static struct fw fw;
static volatile uint32_t clock_ms;
static volatile uint8_t estop_fired;

static const struct fw_config config = {
    .present_mask = BOARD_MOTOR_MASK,
    .queue_depth = BOARD_QUEUE_DEPTH,
    .max_batch = BOARD_MAX_BATCH,
    .watchdog_ms = 1000,
    .status_period_ms = 250,
    .home_ms = BOARD_HOME_MS,
};

_Static_assert(BOARD_QUEUE_DEPTH >= 2 && BOARD_QUEUE_DEPTH <= FW_QUEUE_MAX, "queue depth");
_Static_assert(BOARD_MAX_BATCH >= 1 && BOARD_MAX_BATCH <= FW_MAX_MOVES_FRAME, "max batch");

/* Keep the watchdog from re-firing after a watchdog reset (it stays enabled through reset). */
void early_wdt_off(void) __attribute__((naked, used, section(".init3")));
void early_wdt_off(void)
{
    MCUSR = 0;
    wdt_disable();
}

/*
 * Fletcher-style guard: a few cycles a byte (a CRC here would sit between a finished move group
 * and the next one's start); it tells a torn commit or power-up garbage from a valid slot.
 */
static uint16_t nv_guard(const struct nv_slot *slot)
{
    const uint8_t *p = (const uint8_t *)slot;
    uint8_t a = 0x5A;
    uint8_t b = 0xA5;
    for (uint8_t i = 0; i < offsetof(struct nv_slot, guard); i++) {
        a = (uint8_t)(a + p[i]);
        b = (uint8_t)(b + a);
    }
    return (uint16_t)((uint16_t)b << 8 | a);
}

static uint8_t nv_valid(const struct nv_slot *slot)
{
    return slot->magic == NV_MAGIC && slot->guard == nv_guard(slot);
}

/* --- hooks of the protocol core ------------------------------------------------------------ */

uint8_t hal_tx(const uint8_t *data, uint16_t n)
{
    return uart_write(data, n);
}

void hal_motion_start(const struct fw_move *moves, uint8_t n)
{
    motion_start(moves, n);
}

uint8_t hal_motion_busy(void)
{
    return motion_busy();
}

void hal_motion_stop(void)
{
    motion_stop();
}

void hal_drivers(uint8_t mask)
{
    motion_drivers(mask);
}

void hal_nv_commit(void)
{
    struct nv_slot *old = &nv_slots[nv_current];
    struct nv_slot *next = &nv_slots[nv_current ^ 1u];
    next->magic = NV_MAGIC;
    next->sequence = old->sequence + 1u;
    next->counters = counters;
    next->boot_id = boot_id;
    next->guard = nv_guard(next);
    nv_current ^= 1u;
}

uint8_t hal_estop_active(void)
{
    return !(PIN_IN(BOARD_ESTOP) & PIN_MASK(BOARD_ESTOP));
}

/* --- clock and e-stop ------------------------------------------------------------------------ */

ISR(TIMER0_COMPA_vect)
{
    clock_ms++;
}

static uint32_t millis(void)
{
    uint32_t now;
    ATOMIC_BLOCK(ATOMIC_RESTORESTATE)
    {
        now = clock_ms;
    }
    return now;
}

static void clock_init(void)
{
    TCCR0A = (uint8_t)(1u << WGM01);              /* CTC */
    TCCR0B = (uint8_t)((1u << CS01) | (1u << CS00)); /* clk / 64: 250 kHz */
    OCR0A = (uint8_t)(F_CPU / 64u / 1000u - 1u);  /* 1 kHz */
    TIMSK0 = (uint8_t)(1u << OCIE0A);
}

static void estop_isr(void)
{
    if (hal_estop_active()) {
        motion_abort(); /* within microseconds, not at the next main-loop pass */
        estop_fired = 1;
    }
}

#if defined(BOARD_ESTOP_INT)
_Static_assert(BOARD_VEC_ESTOP == INT4_vect_num && BOARD_ESTOP_INT == 4, "e-stop on INT4");
ISR(INT4_vect)
{
    estop_isr();
}

static void estop_init(void)
{
    PIN_PORT(BOARD_ESTOP) |= PIN_MASK(BOARD_ESTOP); /* pull-up */
    EICRB = (uint8_t)((EICRB & ~((1u << ISC41) | (1u << ISC40))) | (1u << ISC41)); /* falling */
    EIFR = (uint8_t)(1u << INTF4);
    EIMSK |= (uint8_t)(1u << INT4);
}
#elif defined(BOARD_ESTOP_PCINT)
_Static_assert(BOARD_VEC_ESTOP == PCINT1_vect_num && BOARD_ESTOP_PCINT == 8, "e-stop PCINT8");
ISR(PCINT1_vect)
{
    estop_isr();
}

static void estop_init(void)
{
    PIN_PORT(BOARD_ESTOP) |= PIN_MASK(BOARD_ESTOP); /* pull-up */
    PCMSK1 |= (uint8_t)(1u << PCINT8);
    PCIFR = (uint8_t)(1u << PCIF1);
    PCICR |= (uint8_t)(1u << PCIE1);
}
#else
#error "the board file names no e-stop interrupt"
#endif

/* --- boot ------------------------------------------------------------------------------------ */

static uint32_t mix32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x85EBCA6BUL;
    x ^= x >> 13;
    x *= 0xC2B2AE35UL;
    x ^= x >> 16;
    return x;
}

/* A new non-zero boot id: a bijective hash of the EEPROM boot counter and the board's salt. */
static uint32_t next_boot_id(uint32_t previous)
{
    uint32_t count = eeprom_read_dword(EEPROM_BOOT_COUNT) + 1u;
    eeprom_update_dword(EEPROM_BOOT_COUNT, count);
    uint32_t id = mix32(count ^ mix32(eeprom_read_dword(EEPROM_SEED)));
    while (id == 0 || id == previous) {
        id = mix32(id + 1u);
    }
    return id;
}

/* The newest valid slot, or zero counters after a cold power-up (then nv_lost is set).
 * Returns the last boot id. */
static uint8_t nv_lost;
static uint32_t nv_load(void)
{
    uint8_t a = nv_valid(&nv_slots[0]);
    uint8_t b = nv_valid(&nv_slots[1]);
    if (!a && !b) {
        nv_slots[0].sequence = 0;
        nv_current = 0;
        nv_lost = 1;
        return 0;
    }
    nv_current = (a && b) ? ((nv_slots[1].sequence - nv_slots[0].sequence) < 0x80000000UL)
                          : b;
    counters = nv_slots[nv_current].counters;
    return nv_slots[nv_current].boot_id;
}

static void idle(void)
{
    cli();
    /* Sleep only if no interrupt since the last pass left work: a byte, the e-stop, or a
     * group that settled (else the next group would wait for the 1 kHz tick to wake us). */
    if (!estop_fired && !uart_pending() && !motion_settled()) {
        set_sleep_mode(SLEEP_MODE_IDLE);
        sleep_enable();
        sei();
        sleep_cpu(); /* any interrupt (1 kHz clock, UART, steps) wakes us */
        sleep_disable();
    }
    sei();
}

int main(void)
{
    boot_id = next_boot_id(nv_load());
    motion_init();
    uart_init();
    clock_init();
    estop_init();
    wdt_enable(WDTO_250MS); /* a hung main loop resets the board; reset releases the drivers */
    fw_init(&fw, &config, &counters, boot_id, 0); /* commits the counters and boot id */
    fw.boot_flags = nv_lost ? FW_BOOT_COUNTERS_LOST : 0u;
    sei();
    fw_announce(&fw);
    if (hal_estop_active()) {
        fw_estop(&fw, millis());
    }
    for (;;) {
        wdt_reset();
        uint32_t now = millis();
        uint8_t byte;
        while (uart_read(&byte)) {
            fw_rx_byte(&fw, byte, now);
        }
        if (estop_fired) {
            estop_fired = 0;
            fw_estop(&fw, now);
        }
        fw_poll(&fw, now);
        idle();
    }
}
