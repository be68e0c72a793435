/* progress.h - a progress line on standard error, for long runs only.
 *
 * It is drawn only if standard error is a terminal other than standard
 * output's (on the same terminal it would stand in front of output lines), and
 * only once the input
 * proves large (more than 16 MB, or more than 10000 documents, known ahead
 * from file sizes or reached while reading), so pipelines, tests and short
 * runs never see it. Redrawn at most ten times a second, by the main thread.
 */
#ifndef CLI_PROGRESS_H
#define CLI_PROGRESS_H

#include <stddef.h>
#include <stdint.h>

struct progress {
	int tty;
	int shown;
	uint64_t total_bytes; /* 0: unknown */
	uint64_t bytes;
	uint64_t docs;
	double start, last;
};

void progress_init(struct progress *p, uint64_t total_bytes);
/* progress_init() with the total size of the files paths[0..n) (as
 * cli_total_size()), taken only when the line may be drawn. */
void progress_init_paths(struct progress *p, char *const *paths, size_t n);
/* Whether a line may be drawn on err_fd while output goes to out_fd. */
int progress_may_draw(int out_fd, int err_fd);
/* Adds bytes and documents done; redraws if due. */
void progress_add(struct progress *p, uint64_t bytes, uint64_t docs);
/* Shows text (a stage with no count, such as the index build after its
 * reading) on the line, under the same rules as the counts; progress_end()
 * erases it. */
void progress_stage(struct progress *p, const char *text);
/* Erases the line, if drawn. */
void progress_end(struct progress *p);

#endif /* CLI_PROGRESS_H */
