/* One multi-ping-pong cycle (Hein, Booth, Bull, section 3). */
#ifndef PINGPONG_CYCLE_H
#define PINGPONG_CYCLE_H

#include <mpi.h>
#include <stddef.h>

enum { MODE_SEND, MODE_ISEND, MODE_SSEND, MODE_ISSEND, NMODES };
extern const char *const send_mode_names[]; /* NULL-terminated */

typedef struct {
    MPI_Comm comm;
    int partner;
    int pinger;          /* 1 on task A, which starts the cycle */
    int n;               /* messages per direction */
    size_t size;         /* bytes per message */
    int one_buffer;      /* every message from send[0] into recv[0] (osu_bw's default, -b single) */
    char **send, **recv; /* n buffers each (one used with one_buffer) */
    MPI_Request *req;    /* n requests */
} pingpong;

/* A sends n messages to B; once B has received all n (n MPI_Irecv and one
 * MPI_Waitall; one message: MPI_Recv), B sends the n messages back the same way. */
void pingpong_cycle(pingpong *p, int mode);
/* osu_bw's window: A sends n messages (MPI_Isend, one MPI_Waitall), B receives
 * them (n MPI_Irecv, one MPI_Waitall) and answers with one byte. */
void pingpong_window(pingpong *p);

#endif
