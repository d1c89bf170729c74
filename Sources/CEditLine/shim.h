#ifndef KVDOCS_CEDITLINE_SHIM_H
#define KVDOCS_CEDITLINE_SHIM_H
// libedit's readline-compatible API (Debian's libedit-dev).
#include <stdio.h>
#include <stdlib.h>
#include <editline/readline.h>

// Setters for libedit's global configuration, so Swift does not touch C globals directly.
static inline void kv_set_completer(char **(*completer)(const char *, int, int)) {
    rl_attempted_completion_function = completer;
}
static inline void kv_set_readline_name(const char *name) { rl_readline_name = name; }
static inline void kv_disable_filename_completion(void) { rl_completion_append_character = ' '; }
static inline const char *kv_line_buffer(void) { return rl_line_buffer; }
#endif
