#include "library_loader.h"
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void describe(const char *missing, char *error, size_t size) {
    const char *reason = dlerror();
    snprintf(error, size, "%s (%s)", missing, reason ? reason : "no reason given");
}

char *clibrary_probe(const char *soname, const char *missing) {
    void *handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        char error[512];
        describe(missing, error, sizeof error);
        return strdup(error);
    }
    dlclose(handle);
    return NULL;
}

int clibrary_load(struct clibrary *library) {
    pthread_mutex_lock(&library->lock);
    if (!library->loaded) {
        // RTLD_LOCAL: the library's symbols stay out of the global scope (this program defines
        // functions of the same names, which call into it). Never closed.
        void *handle = dlopen(library->soname, RTLD_NOW | RTLD_LOCAL);
        if (!handle) {
            describe(library->missing, library->error, sizeof library->error);
        } else {
            size_t resolved = 0;
            for (; resolved < library->count; resolved++) {
                library->slots[resolved] = dlsym(handle, library->names[resolved]);
                if (!library->slots[resolved]) break;
            }
            if (resolved == library->count) {
                atomic_store_explicit(&library->loaded, 1, memory_order_release);
            } else {
                // An older library without a function this program calls: as good as missing.
                char what[256];
                snprintf(what, sizeof what, "%s (%s has no %s)", library->missing, library->soname, library->names[resolved]);
                snprintf(library->error, sizeof library->error, "%s", what);
                dlclose(handle);
            }
        }
    }
    int loaded = atomic_load_explicit(&library->loaded, memory_order_relaxed);
    pthread_mutex_unlock(&library->lock);
    return loaded ? 0 : -1;
}

void clibrary_require(struct clibrary *library) {
    if (clibrary_load(library) == 0) return;
    fprintf(stderr, "error: %s\n", library->error);
    abort();
}

char *clibrary_load_error(struct clibrary *library) {
    if (clibrary_load(library) == 0) return NULL;
    pthread_mutex_lock(&library->lock);
    char *error = strdup(library->error);
    pthread_mutex_unlock(&library->lock);
    return error;
}
