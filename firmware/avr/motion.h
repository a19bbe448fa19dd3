/*
 * motion.h - the step generator: Timer1 output-compare channels A and B, one per motor of the
 * running group (a group is one move, or two opposite faces turning together).
 *
 * Each channel schedules its own next step edge (OCR1x += interval), so two motors run
 * independent trapezoids: interval k of an S-step move is ramp[min(k, S-1-k)] from a table
 * built for the board's acceleration, or the cruise interval of the maximum speed.  After its
 * last step a channel waits the board's settle time, then goes idle.
 */
#ifndef CUBEROBOT_MOTION_H
#define CUBEROBOT_MOTION_H

#include <stdint.h>

#include "../core/proto.h"

void motion_init(void);
/* Start a group of 1 or 2 moves: set DIR, arm both channels for the same instant. */
void motion_start(const struct fw_move *moves, uint8_t n);
uint8_t motion_busy(void);
/* Nonzero once after a channel has settled: the main loop must not sleep through that. Call
 * with interrupts disabled (the check before sleeping) or accept a spurious extra pass. */
uint8_t motion_settled(void);
/* Stop both channels now; the caller (the protocol core) knows the group was interrupted. */
void motion_stop(void);
/*
 * The e-stop interrupt's stop: both channels halt at once, and motion_busy() keeps answering
 * "busy" until the core's own motion_stop(), so the main loop can never take the halted group
 * for a completed one between the interrupt and its handling of the e-stop.
 */
void motion_abort(void);
/* Energise the drivers in mask (bit i = face code i). */
void motion_drivers(uint8_t mask);

#endif
