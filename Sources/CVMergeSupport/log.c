#include "CVMergeSupport.h"

#include <libavutil/log.h>

static vm_log_handler log_handler = 0;

static void forward_log(void *object, int level, const char *format, va_list arguments) {
    if (level > av_log_get_level() || log_handler == 0) return;
    char line[1024];
    int print_prefix = 0;
    // Without the object: the text alone (the handler names the object itself).
    av_log_format_line2(0, level, format, arguments, line, sizeof line, &print_prefix);
    log_handler(object, level, line);
}

void vm_log_install(int level, vm_log_handler handler) {
    log_handler = handler;
    av_log_set_level(level);
    av_log_set_callback(forward_log);
}
