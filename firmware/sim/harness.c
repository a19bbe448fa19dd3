/*
 * harness.c - runs a firmware ELF in simavr, in real time, with its UART on a pseudo-terminal.
 *
 *   harness --elf build/<board>/firmware.elf [--record FILE] [--stats FILE] [--seed N]
 *
 * Prints "pty /dev/pts/N" on stdout once the board runs.  Commands on stdin, one a line:
 *   estop 1 | estop 0    press / release the e-stop input
 *   reset                reset the MCU (power stays on: the .noinit counters survive)
 *   power                cut the power and restore it: the SRAM comes back holding noise (the
 *                        .noinit counters are lost), the EEPROM keeps its contents
 *   quit                 stop (so does end of input, SIGTERM or SIGINT)
 * The emulated clock is paced to the wall clock (the host link's timeouts are real time); the
 * stats file (JSON) says how far the emulation ever lagged, and every interrupt's worst case.
 * The record file (record.h) holds every motor pin edge with its emulated time.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <avr_eeprom.h>
#include <avr_extint.h>
#include <avr_ioport.h>
#include <avr_uart.h>
#include <sim_avr.h>
#include <sim_elf.h>
#include <sim_irq.h>

#include "record.h"

#include BOARD_FILE

#define STR_(x) #x
#define STR(x) STR_(x)
#define PIN_LETTER_(letter, bit) (STR(letter)[0])
#define PIN_BIT_(letter, bit) (bit)
#define PIN_LETTER(...) PIN_LETTER_(__VA_ARGS__)
#define PIN_BIT(...) PIN_BIT_(__VA_ARGS__)

#define FIFO_SIZE 65536u
#define SERVICE_US 100u /* pty, stdin and pacing every 100 us of emulated time */
#define FLUSH_NS 20000000u /* the pulse record flushed every 20 ms of wall time */

struct fifo {
    uint8_t data[FIFO_SIZE];
    uint32_t head, tail; /* free-running; size = head - tail */
};

static struct {
    avr_t *avr;
    struct recorder rec;
    int master, slave;
    struct fifo to_avr, to_host;
    int xon;
    uint64_t rx_bytes, tx_bytes;
    avr_irq_t *uart_in;
    avr_irq_t *estop_pin;
    uint32_t estop_level; /* 1 = released */
    uint32_t resets_seen;
    double max_lag_ms;
    uint64_t noise; /* the SRAM's contents after a power cut (seeded by --seed) */
} h;

static volatile sig_atomic_t stopping;

static void on_signal(int sig)
{
    (void)sig;
    stopping = 1;
}

static uint64_t wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t emulated_ns(void)
{
    return record_now(&h.rec) * 1000u / (BOARD_F_CPU / 1000000u);
}

/* --- UART <-> pty ------------------------------------------------------------------------- */

static void on_uart_out(struct avr_irq_t *irq, uint32_t value, void *param)
{
    (void)irq;
    (void)param;
    if (h.to_host.head - h.to_host.tail < FIFO_SIZE) { /* else: the host is gone; drop */
        h.to_host.data[h.to_host.head++ % FIFO_SIZE] = (uint8_t)value;
        h.tx_bytes++;
    }
}

static void on_xon(struct avr_irq_t *irq, uint32_t value, void *param)
{
    (void)irq, (void)value, (void)param;
    h.xon = 1;
}

static void on_xoff(struct avr_irq_t *irq, uint32_t value, void *param)
{
    (void)irq, (void)value, (void)param;
    h.xon = 0;
}

static void open_pty(void)
{
    char name[128];
    if (openpty(&h.master, &h.slave, name, NULL, NULL) < 0) {
        perror("harness: openpty");
        exit(2);
    }
    struct termios tio;
    tcgetattr(h.slave, &tio);
    cfmakeraw(&tio); /* no echo: the firmware's bytes must never come back to it */
    tcsetattr(h.slave, TCSANOW, &tio);
    fcntl(h.master, F_SETFL, fcntl(h.master, F_GETFL) | O_NONBLOCK);
    printf("pty %s\n", name);
    fflush(stdout);
    /* Nobody reads stdout after this line: simavr's later messages go to stderr instead of
     * filling a pipe and stalling the emulation. */
    dup2(STDERR_FILENO, STDOUT_FILENO);
}

static void connect_uart(void)
{
    uint32_t flags = 0;
    avr_ioctl(h.avr, AVR_IOCTL_UART_GET_FLAGS('0'), &flags);
    flags &= ~(uint32_t)AVR_UART_FLAG_STDIO;
    avr_ioctl(h.avr, AVR_IOCTL_UART_SET_FLAGS('0'), &flags);
    h.uart_in = avr_io_getirq(h.avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_INPUT);
    avr_irq_register_notify(avr_io_getirq(h.avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUTPUT),
                            on_uart_out, NULL);
    avr_irq_register_notify(avr_io_getirq(h.avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUT_XON),
                            on_xon, NULL);
    avr_irq_register_notify(avr_io_getirq(h.avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUT_XOFF),
                            on_xoff, NULL);
    h.xon = 1;
}

static void service_pty(void)
{
    uint8_t buf[512];
    uint32_t room = FIFO_SIZE - (h.to_avr.head - h.to_avr.tail);
    ssize_t n = read(h.master, buf, room < sizeof buf ? room : sizeof buf);
    for (ssize_t i = 0; i < n; i++) {
        h.to_avr.data[h.to_avr.head++ % FIFO_SIZE] = buf[i];
    }
    while (h.xon && h.to_avr.head != h.to_avr.tail) {
        h.rx_bytes++;
        avr_raise_irq(h.uart_in, h.to_avr.data[h.to_avr.tail++ % FIFO_SIZE]);
    }
    while (h.to_host.head != h.to_host.tail) {
        uint32_t at = h.to_host.tail % FIFO_SIZE;
        uint32_t len = h.to_host.head - h.to_host.tail;
        len = len < FIFO_SIZE - at ? len : FIFO_SIZE - at;
        ssize_t w = write(h.master, h.to_host.data + at, len);
        if (w <= 0) {
            break; /* nobody reads (EAGAIN): keep the bytes */
        }
        h.to_host.tail += (uint32_t)w;
    }
}

/* --- control ------------------------------------------------------------------------------- */

/* A power cut: every SRAM cell (above the I/O registers) comes back with an arbitrary value,
 * not zero, and the MCU starts from its reset vector. */
static void power_cycle(void)
{
    for (uint32_t a = (uint32_t)h.avr->ioend + 1u; a <= h.avr->ramend; a++) {
        h.noise = h.noise * 6364136223846793005ull + 1442695040888963407ull;
        h.avr->data[a] = (uint8_t)(h.noise >> 56);
    }
    record_reset(&h.rec);
}

static void command(const char *line)
{
    if (strncmp(line, "estop ", 6) == 0) {
        h.estop_level = line[6] == '1' ? 0u : 1u; /* pressed = low */
        avr_raise_irq(h.estop_pin, h.estop_level);
    } else if (strncmp(line, "reset", 5) == 0) {
        record_reset(&h.rec);
    } else if (strncmp(line, "power", 5) == 0) {
        power_cycle();
    } else if (strncmp(line, "quit", 4) == 0) {
        stopping = 1;
    } else {
        fprintf(stderr, "harness: unknown command %s", line);
    }
}

static void service_stdin(void)
{
    static char line[128];
    static size_t fill;
    char c;
    ssize_t n;
    while ((n = read(STDIN_FILENO, &c, 1)) == 1) {
        if (fill < sizeof line - 1) {
            line[fill++] = c;
        }
        if (c == '\n') {
            line[fill] = 0;
            command(line);
            fill = 0;
        }
    }
    if (n == 0) {
        stopping = 1; /* our parent went away */
    }
}

/* --- pacing -------------------------------------------------------------------------------- */

static void pace(uint64_t start_ns)
{
    uint64_t emu = emulated_ns();
    uint64_t wall = wall_ns() - start_ns;
    if (emu > wall + 200000u) {
        struct timespec ts = {0, (long)(emu - wall)};
        nanosleep(&ts, NULL);
    } else if (wall > emu) {
        double lag = (double)(wall - emu) / 1e6;
        h.max_lag_ms = lag > h.max_lag_ms ? lag : h.max_lag_ms;
    }
}

/* A reset clears the PIN registers: drive the e-stop input again (toggling, because simavr
 * does not re-notify an unchanged level). */
static void after_reset(void)
{
    h.resets_seen = h.rec.resets;
    avr_raise_irq(h.estop_pin, !h.estop_level);
    avr_raise_irq(h.estop_pin, h.estop_level);
    h.xon = 1;
}

static void no_sleep(avr_t *avr, avr_cycle_count_t how_long)
{
    (void)avr, (void)how_long; /* pace() keeps time instead of simavr's usleep */
}

/* --- main ---------------------------------------------------------------------------------- */

static void write_header(FILE *out)
{
    double spr = (double)BOARD_FULL_STEPS_PER_REV * BOARD_MICROSTEPS;
    fprintf(out, "# board %s mcu %s f_cpu %lu steps_per_quarter %.0f max_rate %.3f accel %.3f "
                 "settle_us %u present %u dir_invert %u\n",
            BOARD_NAME, BOARD_MCU_NAME, (unsigned long)BOARD_F_CPU, spr / 4.0,
            BOARD_MAX_SPEED_DPS * spr / 360.0, BOARD_ACCEL_DPS2 * spr / 360.0,
            (unsigned)BOARD_SETTLE_US, (unsigned)BOARD_MOTOR_MASK,
            (unsigned)BOARD_DIR_INVERT_MASK);
}

static void load(const char *elf_path, uint32_t seed)
{
    elf_firmware_t fw;
    memset(&fw, 0, sizeof fw);
    if (elf_read_firmware(elf_path, &fw) != 0) {
        fprintf(stderr, "harness: cannot read %s\n", elf_path);
        exit(2);
    }
    h.avr = avr_make_mcu_by_name(BOARD_MCU_NAME);
    if (!h.avr) {
        fprintf(stderr, "harness: simavr does not know %s\n", BOARD_MCU_NAME);
        exit(2);
    }
    avr_init(h.avr);
    fw.frequency = BOARD_F_CPU;
    avr_load_firmware(h.avr, &fw);
    h.avr->sleep = no_sleep;
    /* INT0/INT1 sit on step pins of the CNC shield; the firmware never enables them, but
     * simavr polls a low-level-sensed INT pin every cycle while it is low. */
    avr_extint_set_strict_lvl_trig(h.avr, 0, 0);
    avr_extint_set_strict_lvl_trig(h.avr, 1, 0);
    uint8_t salt[4] = {(uint8_t)seed, (uint8_t)(seed >> 8), (uint8_t)(seed >> 16),
                       (uint8_t)(seed >> 24)};
    avr_eeprom_desc_t desc = {.ee = salt, .offset = 4, .size = 4};
    avr_ioctl(h.avr, AVR_IOCTL_EEPROM_SET, &desc);
}

int main(int argc, char **argv)
{
    const char *elf = NULL, *record_path = NULL, *stats_path = NULL;
    uint32_t seed = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--elf")) elf = argv[i + 1];
        else if (!strcmp(argv[i], "--record")) record_path = argv[i + 1];
        else if (!strcmp(argv[i], "--stats")) stats_path = argv[i + 1];
        else if (!strcmp(argv[i], "--seed")) seed = (uint32_t)strtoul(argv[i + 1], NULL, 0);
    }
    if (!elf) {
        fprintf(stderr, "usage: %s --elf FILE [--record FILE] [--stats FILE] [--seed N]\n",
                argv[0]);
        return 2;
    }
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    signal(SIGPIPE, SIG_IGN);
    fcntl(STDIN_FILENO, F_SETFL, fcntl(STDIN_FILENO, F_GETFL) | O_NONBLOCK);
    load(elf, seed);
    h.noise = 0x9E3779B97F4A7C15ull ^ seed;
    FILE *rec_out = record_path ? fopen(record_path, "w") : NULL;
    if (rec_out) {
        setvbuf(rec_out, NULL, _IOFBF, 1 << 16);
        write_header(rec_out);
    }
    record_init(&h.rec, h.avr, rec_out);
    record_watch_pins(&h.rec);
    h.estop_pin = avr_io_getirq(h.avr, AVR_IOCTL_IOPORT_GETIRQ(PIN_LETTER(BOARD_ESTOP)),
                                PIN_BIT(BOARD_ESTOP));
    h.estop_level = 1; /* released */
    avr_raise_irq(h.estop_pin, h.estop_level);
    connect_uart();
    open_pty();
    uint64_t start = wall_ns();
    uint64_t service_every = BOARD_F_CPU / 1000000u * SERVICE_US;
    uint64_t next_service = 0;
    uint64_t next_flush = 0;
    int state = cpu_Running;
    while (!stopping && state != cpu_Done && state != cpu_Crashed) {
        state = record_step(&h.rec);
        if (h.rec.resets != h.resets_seen) {
            after_reset();
        }
        if (record_now(&h.rec) >= next_service) {
            next_service = record_now(&h.rec) + service_every;
            service_pty();
            service_stdin();
            pace(start);
            /* the record is read while it grows (the simulated robot's cameras follow the
             * motors): whole lines reach the file at least every FLUSH_NS of wall time */
            if (rec_out && wall_ns() >= next_flush) {
                fflush(rec_out);
                next_flush = wall_ns() + FLUSH_NS;
            }
        }
    }
    if (rec_out) {
        fclose(rec_out);
    }
    if (stats_path) {
        FILE *out = fopen(stats_path, "w");
        if (out) {
            record_write_stats(&h.rec, out, h.max_lag_ms, h.rx_bytes, h.tx_bytes);
            fclose(out);
        }
    }
    if (state == cpu_Crashed) {
        fprintf(stderr, "harness: the firmware crashed at pc 0x%x\n", (unsigned)h.avr->pc);
        return 3;
    }
    return 0;
}
