// Prints AWS's burst duration of a 100 GiB gp2 volume at 3,000 IOPS: 5.4e6 / (3,000 - 300) = 2000 s.
#include <cstdio>

#include <ebssim/ebssim.hpp>

int main() {
    ebssim::VolumeSpec s;
    s.type = ebssim::VolumeType::gp2;
    s.size_gib = 100;
    const double d = ebssim::burst_duration_s(ebssim::make_volume(s), 3000);
    std::printf("%.0f\n", d);
    return d == 2000 ? 0 : 1;
}
