#include "CVMergeSupport.h"

#include <libavutil/mem.h>

// libavformat has no public call that adds a chapter to an output (the ffmpeg CLI grows the
// array itself too); avformat_free_context frees what is added here.
int vm_add_chapter(AVFormatContext *s, int64_t start_us, int64_t end_us, const char *title) {
    AVChapter *chapter = av_mallocz(sizeof *chapter);
    if (!chapter) return AVERROR(ENOMEM);
    AVChapter **list = av_realloc_array(s->chapters, s->nb_chapters + 1, sizeof *list);
    if (!list) {
        av_free(chapter);
        return AVERROR(ENOMEM);
    }
    s->chapters = list;
    chapter->id = s->nb_chapters + 1;
    chapter->time_base = (AVRational){1, 1000000};
    chapter->start = start_us;
    chapter->end = end_us;
    int ret = title ? av_dict_set(&chapter->metadata, "title", title, 0) : 0;
    s->chapters[s->nb_chapters++] = chapter;
    return ret < 0 ? ret : 0;
}

void vm_end_chapters_at(AVFormatContext *s, int64_t end_us) {
    while (s->nb_chapters > 0 && s->chapters[s->nb_chapters - 1]->start >= end_us) {
        AVChapter *last = s->chapters[--s->nb_chapters];
        av_dict_free(&last->metadata);
        av_freep(&last);
    }
    if (s->nb_chapters > 0 && s->chapters[s->nb_chapters - 1]->end > end_us)
        s->chapters[s->nb_chapters - 1]->end = end_us;
}
