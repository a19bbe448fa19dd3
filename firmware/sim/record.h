/*
 * record.h - what the emulator harness observes: every STEP edge, DIR level and ENABLE level
 * of every motor pin with its emulated time (in CPU cycles since power-on), resets and e-stop
 * changes, and the duration of every interrupt (vector entry to the end of RETI).
 *
 * Record file, one event a line (cycles count from power-on across resets):
 *   # board <name> mcu <mcu> f_cpu <hz> steps_per_quarter <n> max_rate <steps/s>
 *   #   accel <steps/s^2> settle_us <us> present <mask> dir_invert <mask>
 *   S <cycles> <motor> <level>      STEP pin
 *   D <cycles> <motor> <level>      DIR pin
 *   E <cycles> <motor mask> <level> ENABLE pin (shared pins name every motor they drive)
 *   X <cycles> <level>              e-stop input (0 = pressed)
 *   R <cycles>                      MCU reset
 */
#ifndef CUBEROBOT_RECORD_H
#define CUBEROBOT_RECORD_H

#include <stdint.h>
#include <stdio.h>

#include <sim_avr.h>

#define RECORD_MAX_VECTORS 64

struct isr_stats {
    uint64_t count;
    uint64_t total_cycles;
    uint64_t max_cycles;
};

struct recorder {
    avr_t *avr;
    FILE *out;           /* may be NULL: no pin record */
    uint64_t base;       /* cycles before the last reset */
    uint64_t last_cycle; /* to notice a reset the MCU did itself (hardware watchdog) */
    uint8_t response;    /* interrupt response cycles of this MCU */
    int in_isr;          /* vector being timed, 0 = none */
    uint64_t isr_start;
    struct isr_stats isr[RECORD_MAX_VECTORS];
    uint32_t resets;
};

void record_init(struct recorder *rec, avr_t *avr, FILE *out);
/* Watch every motor pin of the board file and the e-stop input. */
void record_watch_pins(struct recorder *rec);
/* Emulated cycles since power-on (monotonic across resets). */
uint64_t record_now(const struct recorder *rec);
/* Run one instruction (or one sleep stretch) with interrupt timing and reset detection. */
int record_step(struct recorder *rec);
/* Reset the MCU (avr_reset sets the cycle counter back to 0; the record's time goes on). */
void record_reset(struct recorder *rec);
void record_write_stats(const struct recorder *rec, FILE *out, double max_lag_ms,
                        uint64_t rx_bytes, uint64_t tx_bytes);

#endif
