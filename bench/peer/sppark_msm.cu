// Peer benchmark: sppark's (supranational/sppark) BLS12-381 MSM, msm_t::invoke, on the bases
// and scalars bench.msm measures, written to files by bench/msm_check.py; run by bench.msm
// --sppark in the same process call as our own figures. Built by bench/peer/sppark.sh;
// sppark itself is only included.
//
//   sppark_msm g1|g2 BASES SCALARS N RUNS
// BASES: N affine points, X then Y, each coordinate Montgomery form in 32-bit little-endian
// limbs (G2: c0 then c1), as sppark's affine_t lays them out; SCALARS: N canonical 32-byte
// little-endian scalars (mont = false). The bases are made resident once (msm_t's
// constructor), as a prover's are. Timed, each call whole on the host clock (invoke syncs
// and sums the windows on the host, so a call is one call's latency): host scalars in
// (invoke uploads them), and device scalars already resident. 2 warm-up calls, the median of
// RUNS, 3 repeats interleaved. stdout: one JSON line with both figures and the result
// (affine, canonical hex), which bench.msm compares with its own.
#include <ff/bls12-381.hpp>
#include <ff/bls12-381-fp2.hpp>
#include <ec/jacobian_t.hpp>
#include <ec/xyzz_t.hpp>
#define SPPARK_DONT_INSTANTIATE_TEMPLATES  // two curves in one binary: instantiated by use
#include <msm/pippenger.cuh>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#ifndef SPPARK_COMMIT
# define SPPARK_COMMIT "unknown"
#endif

static const int WARMUP = 2, REPEATS = 3;

static double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

template<class T> static std::vector<T> load(const char* path, size_t n)
{
    std::vector<T> out(n);
    FILE* f = fopen(path, "rb");
    if (!f)
        throw std::runtime_error(std::string("cannot open ") + path);
    size_t got = fread(out.data(), sizeof(T), n, f);
    fclose(f);
    if (got != n)
        throw std::runtime_error(std::string(path) + ": " + std::to_string(got) + " of " + std::to_string(n) +
                                 " elements of " + std::to_string(sizeof(T)) + " bytes");
    return out;
}

// Host-side only: nvcc's device pass sees the device field types, which have no from(),
// store() or host comparison; it needs the rest of run() to instantiate the MSM's kernels.
#ifndef __CUDA_ARCH__
// One coordinate's canonical value as hex, from its Montgomery-form bytes (host fp_t).
static std::string hex(const unsigned char* mont)
{
    fp_t x;
    memcpy((void*)&x, mont, sizeof(fp_t));
    x.from();
    limb_t limbs[sizeof(fp_t) / sizeof(limb_t)];
    x.store(limbs);
    std::string s = "0x";
    char buf[17];
    for (int i = sizeof(fp_t) / sizeof(limb_t) - 1; i >= 0; i--) {
        snprintf(buf, sizeof buf, "%016llx", (unsigned long long)limbs[i]);
        s += buf;
    }
    return s;
}

// The result as JSON fields ("infinity", "coords": canonical hex, x then y, c0 then c1);
// throws if the host-scalar and device-scalar calls disagree.
template<class point_t, class affine_t> static std::string result_json(const point_t& host, const point_t& device)
{
    if (host != device)
        throw std::runtime_error("host-scalar and device-scalar results differ");
    affine_t a = host;
    unsigned char raw[sizeof(affine_t)];
    memcpy(raw, (const void*)&a, sizeof raw);
    std::string list;
    for (size_t k = 0; k < sizeof(affine_t) / sizeof(fp_t); k++)
        list += std::string(k ? "\", \"" : "") + hex(raw + k * sizeof(fp_t));
    return std::string("\"infinity\": ") + (host.is_inf() ? "true" : "false") + ", \"coords\": [\"" + list + "\"]";
}
#else
template<class point_t, class affine_t> static std::string result_json(const point_t&, const point_t&)
{   return "";   }
#endif

template<class field_t> static int run(const char* curve, const char* bases_path, const char* scalars_path,
                                       size_t n, int runs)
{
    using bucket_t = xyzz_t<field_t>;
    using point_t = jacobian_t<field_t>;
    using affine_t = typename bucket_t::affine_t;
    using msm = msm_t<bucket_t, point_t, affine_t, fr_t>;

    auto points = load<affine_t>(bases_path, n);
    auto scalars = load<fr_t>(scalars_path, n);
    msm m{points.data(), n};                            // bases resident from here on
    dev_ptr_t<fr_t> d_scalars{n};
    CUDA_OK(cudaMemcpy((fr_t*)d_scalars, scalars.data(), n * sizeof(fr_t), cudaMemcpyHostToDevice));

    point_t host_out, device_out;
    auto call = [&](bool host) {
        // points nullptr: the resident bases; device scalars through sppark's is_device_ptr overload
        RustError e = host ? m.invoke(host_out, (const affine_t*)nullptr, n, (const fr_t*)scalars.data(), false)
                           : m.invoke(device_out, (const affine_t*)nullptr, n, d_scalars, false);
        if (e.code != cudaSuccess)
            throw std::runtime_error("msm_t::invoke failed: " + std::to_string(e.code) + " " +
                                     (e.message ? e.message : ""));
    };
    auto timed = [&](bool host) {
        for (int i = 0; i < WARMUP; i++) call(host);
        std::vector<double> t;
        for (int i = 0; i < runs; i++) {
            auto t0 = std::chrono::steady_clock::now();
            call(host);
            t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
        }
        return median(t);
    };
    std::vector<double> up, dev;
    for (int r = 0; r < REPEATS; r++) {
        up.push_back(timed(true));
        dev.push_back(timed(false));
    }
    std::string result = result_json<point_t, affine_t>(host_out, device_out);
    auto spread = [](const std::vector<double>& v) {
        return 100 * (*std::max_element(v.begin(), v.end()) - *std::min_element(v.begin(), v.end())) / median(v);
    };
    printf("{\"curve\": \"%s\", \"n\": %zu, \"upload_ms\": %.4f, \"upload_spread_pct\": %.2f, "
           "\"device_ms\": %.4f, \"device_spread_pct\": %.2f, \"runs\": %d, \"warmup\": %d, \"repeats\": %d, "
           "%s, \"sppark_commit\": \"%s\"}\n",
           curve, n, median(up), spread(up), median(dev), spread(dev), runs, WARMUP, REPEATS,
           result.c_str(), SPPARK_COMMIT);
    fprintf(stderr, "sppark msm %s 2^%.0f: host scalars %.3f ms, device scalars %.3f ms\n",
            curve, std::log2((double)n), median(up), median(dev));
    fflush(stdout);
    return 0;
}

int main(int argc, char** argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: %s g1|g2 BASES SCALARS N RUNS\n", argv[0]);
        return 2;
    }
    try {
        std::string curve = argv[1];
        size_t n = std::stoull(argv[4]);
        int runs = std::stoi(argv[5]);
        if (curve == "g1")
            return run<fp_t>(argv[1], argv[2], argv[3], n, runs);
        if (curve == "g2")
            return run<fp2_t>(argv[1], argv[2], argv[3], n, runs);
        fprintf(stderr, "sppark_msm: curve must be g1 or g2, not %s\n", argv[1]);
        return 2;
    } catch (const std::exception& e) {
        fprintf(stderr, "sppark_msm: %s\n", e.what());
        return 1;
    }
}
