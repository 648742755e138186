// A minimal OpenMP runtime for ThreadSanitizer runs of generated code
// (tests/sanitize.rs, `every_npbench_kernel_is_race_free_under_tsan`).
//
// libgomp is not built with TSan: its barriers and thread pool synchronise
// through futexes TSan cannot see, so every parallel region would report
// false races. This file replaces it. The library under test is compiled with
// `-fopenmp -fsanitize=thread` and linked with this file instead of libgomp
// (`-Wl,-z,defs`: an OpenMP entry point missing here fails the link, it is
// never silently taken from somewhere else). Every parallel region starts its
// team with `pthread_create` and ends it with `pthread_join` (through
// std::thread), which TSan understands, so the only races it can report are
// real ones between the threads of one region. GCC lowers
// `#pragma omp parallel for` (static schedule, collapse included) to
// `GOMP_parallel` plus `omp_get_num_threads` / `omp_get_thread_num`, and
// `#pragma omp atomic` to atomic builtins that TSan instruments; critical
// sections and barriers are provided with std::mutex / std::condition_variable.
//
// Team size: `num_threads` if the region asks for one, else OMP_NUM_THREADS
// (default 3). Nested regions run with a team of one thread, as libgomp does
// by default.

#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

namespace {

struct Team {
    unsigned size = 1;
    std::mutex m;
    std::condition_variable cv;
    unsigned arrived = 0;
    unsigned long generation = 0;
};

thread_local Team *tls_team = nullptr;
thread_local unsigned tls_id = 0;
thread_local int tls_level = 0;
std::mutex critical_mutex;

unsigned default_threads() {
    const char *s = std::getenv("OMP_NUM_THREADS");
    long n = s ? std::strtol(s, nullptr, 10) : 0;
    return n > 0 ? static_cast<unsigned>(n) : 3u;
}

}  // namespace

extern "C" {

void GOMP_parallel(void (*fn)(void *), void *data, unsigned num_threads, unsigned flags) {
    (void)flags;
    Team *outer_team = tls_team;
    unsigned outer_id = tls_id;
    int level = tls_level;
    Team team;
    team.size = level > 0 ? 1u : (num_threads ? num_threads : default_threads());
    std::vector<std::thread> workers;
    for (unsigned i = 1; i < team.size; ++i) {
        workers.emplace_back([&team, fn, data, i, level] {
            tls_team = &team;
            tls_id = i;
            tls_level = level + 1;
            fn(data);
        });
    }
    tls_team = &team;
    tls_id = 0;
    tls_level = level + 1;
    fn(data);
    for (auto &w : workers) w.join();
    tls_team = outer_team;
    tls_id = outer_id;
    tls_level = level;
}

void GOMP_barrier(void) {
    Team *t = tls_team;
    if (!t || t->size == 1) return;
    std::unique_lock<std::mutex> lock(t->m);
    unsigned long gen = t->generation;
    if (++t->arrived == t->size) {
        t->arrived = 0;
        ++t->generation;
        t->cv.notify_all();
    } else {
        t->cv.wait(lock, [&] { return t->generation != gen; });
    }
}

void GOMP_critical_start(void) { critical_mutex.lock(); }
void GOMP_critical_end(void) { critical_mutex.unlock(); }
void GOMP_critical_name_start(void **) { critical_mutex.lock(); }
void GOMP_critical_name_end(void **) { critical_mutex.unlock(); }
void GOMP_atomic_start(void) { critical_mutex.lock(); }
void GOMP_atomic_end(void) { critical_mutex.unlock(); }

int omp_get_thread_num(void) { return static_cast<int>(tls_id); }
int omp_get_num_threads(void) { return tls_team ? static_cast<int>(tls_team->size) : 1; }
int omp_get_max_threads(void) { return tls_level > 0 ? 1 : static_cast<int>(default_threads()); }
int omp_in_parallel(void) { return tls_team && tls_team->size > 1; }
int omp_get_level(void) { return tls_level; }

}  // extern "C"
