// Peer benchmark: sppark's (supranational/sppark) BLS12-381 NTT and field products, run in
// the same device call as our bench.ntt / bench.field, since figures drift ~5% between
// machine starts. Built and run by bench/peer/sppark.sh; sppark itself is only included.
//
// Timing: CUDA events on one stream, back to back (median_ms), 2 warm-up launches, the
// median of 7, repeated 3 times with the figures interleaved (drift hits all alike).
// stdout: one JSON line per figure; stderr: the same for people.
#include <ff/bls12-381.hpp>
#include <ntt/ntt.cuh>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <functional>
#include <string>
#include <vector>

#ifndef SPPARK_COMMIT
# define SPPARK_COMMIT "unknown"
#endif
#ifndef REPO_COMMIT
# define REPO_COMMIT "unknown"
#endif

static const int WARMUP = 2, RUNS = 7, REPEATS = 3;
static const int MUL_LOG_THREADS = 22, MUL_CHAIN = 64, MUL_BLOCK = 256;

// Random limbs (splitmix64 of the index), the top 32-bit limb reduced below the modulus'
// top limb, so every value is canonical (< modulus), as bench/field.py's inputs are.
__global__ void fill(uint32_t* p, size_t words, int limbs, uint32_t top, uint64_t seed)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= words) return;
    uint64_t z = seed + (i + 1) * 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    uint32_t v = (uint32_t)(z ^ (z >> 31));
    p[i] = (i % limbs == (size_t)limbs - 1) ? v % top : v;
}

template<class T> static void fill_random(T* d, size_t n, uint32_t top, uint64_t seed, cudaStream_t s)
{
    const int limbs = sizeof(T) / 4;
    size_t words = n * limbs;
    fill<<<(words + 255) / 256, 256, 0, s>>>((uint32_t*)d, words, limbs, top, seed);
    CUDA_OK(cudaGetLastError());
}

// bench/field.py's shape: per thread load a, b; a = a*b `chain` times (dependent products);
// store a. sppark's own element layout (one element contiguous per thread), chain a runtime
// argument as in field.py.
template<class T> __global__ void mul_chain(T* a, const T* b, int chain, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= n) return;
    T x = a[i], y = b[i];
    for (int k = 0; k < chain; k++)
        x = x * y;
    a[i] = x;
}

struct Figure {
    std::string name, unit;
    std::function<void()> launch;
    double work;                    // products per launch for G/s; 0: report ms
    std::vector<double> medians;    // per repeat, ms
};

static double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

// Events back to back, as bench/common.device_time_ms: run k's interval starts at run k-1's
// stop event and the warm-ups are still queued when the first starts, so the host's time to
// issue a run overlaps the run before it and only device time (and any wait on the host
// the device actually has) is counted.
static double median_ms(const Figure& f, cudaStream_t s, std::vector<cudaEvent_t>& ev)
{
    for (int i = 0; i < WARMUP; i++) f.launch();
    CUDA_OK(cudaEventRecord(ev[0], s));
    for (int i = 0; i < RUNS; i++) {
        f.launch();
        CUDA_OK(cudaEventRecord(ev[i + 1], s));
    }
    CUDA_OK(cudaEventSynchronize(ev[RUNS]));
    std::vector<double> t;
    for (int i = 0; i < RUNS; i++) {
        float ms;
        CUDA_OK(cudaEventElapsedTime(&ms, ev[i], ev[i + 1]));
        t.push_back(ms);
    }
    return median(t);
}

// Forward then inverse NTT must give the input back: catches a build whose host and device
// constants disagree (e.g. a missing FEATURE_BLS12_381) before anything is timed.
static void check_roundtrip(stream_t& stream, fr_t* d, uint32_t lg)
{
    size_t bytes = sizeof(fr_t) << lg;
    std::vector<char> before(bytes), after(bytes);
    CUDA_OK(cudaMemcpyAsync(before.data(), d, bytes, cudaMemcpyDeviceToHost, stream));
    NTT::Base_dev_ptr(stream, d, lg, NTT::InputOutputOrder::NN, NTT::Direction::forward, NTT::Type::standard);
    NTT::Base_dev_ptr(stream, d, lg, NTT::InputOutputOrder::NN, NTT::Direction::inverse, NTT::Type::standard);
    CUDA_OK(cudaMemcpyAsync(after.data(), d, bytes, cudaMemcpyDeviceToHost, stream));
    stream.sync();
    if (before != after)
        throw std::runtime_error("sppark NTT round trip at 2^" + std::to_string(lg) + " did not return the input");
}

static int bench()
{
    const gpu_t& gpu = select_gpu(0);   // sppark's device list: NTT twiddles, props lookups
    stream_t stream(gpu.id());          // our own stream, as a prover would pass
    cudaStream_t s = stream;
    const cudaDeviceProp& prop = gpu.props();
    fprintf(stderr, "sppark %s on %s (sm_%d%d)\n", SPPARK_COMMIT, prop.name, prop.major, prop.minor);

    const uint32_t R_TOP = 0x73eda753, P_TOP = 0x1a0111ea;   // top 32 bits of r and p
    const uint32_t MAX_LG = 24;
    fr_t* d_ntt;
    CUDA_OK(cudaMalloc(&d_ntt, sizeof(fr_t) << MAX_LG));
    fill_random(d_ntt, (size_t)1 << MAX_LG, R_TOP, 1, s);

    const size_t n_mul = (size_t)1 << MUL_LOG_THREADS;
    fr_t *d_fr_a, *d_fr_b;
    fp_t *d_fp_a, *d_fp_b;
    CUDA_OK(cudaMalloc(&d_fr_a, n_mul * sizeof(fr_t)));
    CUDA_OK(cudaMalloc(&d_fr_b, n_mul * sizeof(fr_t)));
    CUDA_OK(cudaMalloc(&d_fp_a, n_mul * sizeof(fp_t)));
    CUDA_OK(cudaMalloc(&d_fp_b, n_mul * sizeof(fp_t)));
    fill_random(d_fr_a, n_mul, R_TOP, 2, s);
    fill_random(d_fr_b, n_mul, R_TOP, 3, s);
    fill_random(d_fp_a, n_mul, P_TOP, 4, s);
    fill_random(d_fp_b, n_mul, P_TOP, 5, s);
    CUDA_OK(cudaStreamSynchronize(s));
    check_roundtrip(stream, d_ntt, 16);

    using IO = NTT::InputOutputOrder;
    using Ty = NTT::Type;
    auto ntt = [&](uint32_t lg, IO order, Ty type) {
        // In place on the resident vector: no allocation, copy or sync inside (ntt/ntt.cuh).
        return [&stream, d_ntt, lg, order, type] {
            NTT::Base_dev_ptr(stream, d_ntt, lg, order, NTT::Direction::forward, type);
        };
    };
    const unsigned grid = (n_mul + MUL_BLOCK - 1) / MUL_BLOCK;
    const double products = (double)n_mul * MUL_CHAIN;
    std::vector<Figure> figs = {
        {"sppark_ntt_fr_log20", "ms", ntt(20, IO::NN, Ty::standard), 0, {}},
        {"sppark_ntt_fr_log22", "ms", ntt(22, IO::NN, Ty::standard), 0, {}},
        {"sppark_ntt_fr_log24", "ms", ntt(24, IO::NN, Ty::standard), 0, {}},
        {"sppark_ntt_fr_log24_nr", "ms", ntt(24, IO::NR, Ty::standard), 0, {}},
        {"sppark_coset_ntt_fr_log24", "ms", ntt(24, IO::NN, Ty::coset), 0, {}},
        {"sppark_fr_mul", "G/s", [&] { mul_chain<<<grid, MUL_BLOCK, 0, s>>>(d_fr_a, d_fr_b, MUL_CHAIN, n_mul); }, products, {}},
        {"sppark_fq_mul", "G/s", [&] { mul_chain<<<grid, MUL_BLOCK, 0, s>>>(d_fp_a, d_fp_b, MUL_CHAIN, n_mul); }, products, {}},
    };

    std::vector<cudaEvent_t> ev(RUNS + 1);
    for (auto& e : ev)
        CUDA_OK(cudaEventCreate(&e));
    for (int r = 0; r < REPEATS; r++)
        for (auto& f : figs) {
            f.medians.push_back(median_ms(f, s, ev));
            CUDA_OK(cudaGetLastError());
        }

    char date[16];
    time_t now = time(nullptr);
    strftime(date, sizeof date, "%Y-%m-%d", gmtime(&now));
    for (auto& f : figs) {
        auto value = [&](double ms) { return f.work ? f.work / (ms * 1e-3) / 1e9 : ms; };
        double ms = median(f.medians), v = value(ms);
        std::vector<double> vals;
        for (double m : f.medians) vals.push_back(value(m));
        auto [lo, hi] = std::minmax_element(vals.begin(), vals.end());
        double spread = 100 * (*hi - *lo) / v;
        std::string reps;
        for (double x : vals) reps += (reps.empty() ? "" : ", ") + std::to_string(x);
        printf("{\"name\": \"%s\", \"value\": %.4f, \"unit\": \"%s\", \"repeat_medians\": [%s], "
               "\"spread_pct\": %.2f, \"device\": \"%s\", \"commit\": \"%s\", \"date\": \"%s\", "
               "\"params\": {\"runs\": %d, \"warmup\": %d, \"repeats\": %d, \"stat\": \"median of medians\", "
               "\"median_ms\": %.4f%s, \"sppark_commit\": \"%s\"}}\n",
               f.name.c_str(), v, f.unit.c_str(), reps.c_str(), spread, prop.name, REPO_COMMIT, date,
               RUNS, WARMUP, REPEATS, ms,
               f.work ? (", \"threads\": " + std::to_string(n_mul) + ", \"chain\": " + std::to_string(MUL_CHAIN) +
                         ", \"block\": " + std::to_string(MUL_BLOCK)).c_str() : "",
               SPPARK_COMMIT);
        fprintf(stderr, "%-28s %10.4f %-3s  spread %5.2f%%  (repeats: %s)\n",
                f.name.c_str(), v, f.unit.c_str(), spread, reps.c_str());
    }
    fflush(stdout);
    return 0;
}

int main()
{
    try {
        return bench();
    } catch (const std::exception& e) {
        fprintf(stderr, "sppark_bench: %s\n", e.what());
        return 1;
    }
}
