/*
 * Board: Arduino Mega 2560 (ATmega2560, 16 MHz) with a RAMPS 1.4 shield: five drivers on the
 * shield (X Y Z E0 E1) and a sixth on the AUX-4 header (D44 step, D42 dir, D40 enable), all
 * step/dir drivers (A4988, DRV8825, TMC2208 in step/dir mode) at 1/32 microstepping.
 *
 * Plain data: the firmware (avr/) and the emulator harness (sim/) both read it.  Pins are a port
 * letter and a bit.  Face codes: U=0 R=1 F=2 D=3 L=4 B=5.
 */
#ifndef CUBEROBOT_BOARD_H
#define CUBEROBOT_BOARD_H

#define BOARD_NAME "mega2560-ramps"
#define BOARD_MCU_NAME "atmega2560"
#define BOARD_F_CPU 16000000UL
#define BOARD_MOTOR_MASK 0x3F /* all six faces have a motor */

/* motion (every motor alike) */
#define BOARD_FULL_STEPS_PER_REV 200
#define BOARD_MICROSTEPS 32
#define BOARD_MAX_SPEED_DPS 1500   /* 26 667 steps/s: a quarter turn in about 97 ms */
#define BOARD_ACCEL_DPS2 40000
#define BOARD_SETTLE_US 5000       /* gripper settling after each move group */
#define BOARD_HOME_MS 300
#define BOARD_DIR_INVERT_MASK 0x00 /* bit i set: motor i's DIR level is inverted */
#define BOARD_ENABLE_ACTIVE_LOW 1

/* protocol sizing */
#define BOARD_QUEUE_DEPTH 16
#define BOARD_MAX_BATCH 16
#define BOARD_RX_RING 128 /* bytes; a power of two */
#define BOARD_TX_RING 256 /* bytes; a power of two */

/* serial: USART0 (the USB bridge), 115200 baud, double speed */
#define BOARD_BAUD 115200UL

/* pins: motor i = face code i */
#define M0_STEP F, 0 /* X  D54 */
#define M0_DIR F, 1  /*    D55 */
#define M0_EN D, 7   /*    D38 */
#define M1_STEP F, 6 /* Y  D60 */
#define M1_DIR F, 7  /*    D61 */
#define M1_EN F, 2   /*    D56 */
#define M2_STEP L, 3 /* Z  D46 */
#define M2_DIR L, 1  /*    D48 */
#define M2_EN K, 0   /*    D62 */
#define M3_STEP A, 4 /* E0 D26 */
#define M3_DIR A, 6  /*    D28 */
#define M3_EN A, 2   /*    D24 */
#define M4_STEP C, 1 /* E1 D36 */
#define M4_DIR C, 3  /*    D34 */
#define M4_EN C, 7   /*    D30 */
#define M5_STEP L, 5 /* AUX-4 D44 */
#define M5_DIR L, 7  /*       D42 */
#define M5_EN G, 1   /*       D40 */

/* e-stop: X-MAX endstop header, D2 = PE4 = INT4, active low with the internal pull-up */
#define BOARD_ESTOP E, 4
#define BOARD_ESTOP_INT 4

/* interrupt vector numbers (checked against <avr/io.h> by the firmware build) */
#define BOARD_VEC_STEP_A 17 /* TIMER1_COMPA */
#define BOARD_VEC_STEP_B 18 /* TIMER1_COMPB */
#define BOARD_VEC_TICK 21   /* TIMER0_COMPA */
#define BOARD_VEC_UART_RX 25 /* USART0_RX */
#define BOARD_VEC_UART_UDRE 26 /* USART0_UDRE */
#define BOARD_VEC_ESTOP 5   /* INT4 */

#endif
