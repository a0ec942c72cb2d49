#pragma once
/// \file instance.hpp
/// Instance-level EBS limits: the budget that every volume attached to one instance shares.
/// Limits are in decimal MB/s (AWS's EbsOptimizedInfo); volume limits are MiB/s.

#include <cstdint>
#include <string>

#include "ebssim/latency.hpp"
#include "ebssim/volume.hpp"

namespace ebssim {

/// How the attached volumes share the instance budget when it binds.
enum class SharePolicy : std::uint8_t {
    proportional = 0,  ///< every volume keeps the same fraction of what its own limits allow
    fair = 1,          ///< max-min fair: small demands are met in full, the rest split equally
};

/// An instance type's EBS limits (DescribeInstanceTypes EbsOptimizedInfo) and the burst-bucket
/// assumption. NaN fields take the defaults documented in docs/model.md.
struct InstanceSpec {
    std::string name;  ///< e.g. "m5.large"; informative only
    double baseline_iops = unset;
    double max_iops = unset;
    double baseline_mb_s = unset;   ///< BaselineThroughputInMBps (decimal MB/s)
    double max_mb_s = unset;        ///< MaximumThroughputInMBps
    bool nitro = true;              ///< Hypervisor nitro (or bare metal) vs xen
    double burst_s = 1800;          ///< a full bucket holds the maximum this long
    double refill_s = 84600;        ///< an empty bucket refills in this long at idle
    double io_balance_pct = 100;    ///< initial EBSIOBalance%
    double byte_balance_pct = 100;  ///< initial EBSByteBalance%
    SharePolicy share = SharePolicy::proportional;
    /// Coefficient of variation of the wait of I/Os the instance's EBS limits hold back (NaN: the
    /// platform's, by the I/Os in flight: instance_wait_cv_at in latency.hpp). Read after the run by
    /// the latency model (LatencyModel::instance_wait_cv), never by the step loop.
    double wait_cv = unset;
};

/// Derived instance parameters the step loop reads.
struct InstanceParams {
    std::string name;
    bool nitro = true;
    SharePolicy share = SharePolicy::proportional;
    double baseline_iops = 0, max_iops = 0;
    double baseline_bytes_s = 0, max_bytes_s = 0;
    double io_capacity = 0, bytes_capacity = 0;    ///< bucket sizes (0: no burst)
    double io_earn_idle = 0, bytes_earn_idle = 0;  ///< per second, at idle
    double io_initial = 0, bytes_initial = 0;
    double wait_cv = unset;  ///< of the wait under the instance's limits (the spec's; NaN: the platform's, by depth)
};

/// Validate and derive; throws ConfigError naming the field, value and rule.
InstanceParams make_instance(const InstanceSpec& spec);

}  // namespace ebssim
