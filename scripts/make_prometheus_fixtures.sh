#!/usr/bin/env bash
# Make tests/data/prometheus/: node_exporter's disk metrics of this machine, recorded by a real
# Prometheus while fio drives a local file at a varying rate, read back through the HTTP API.
#
# Needs Debian's prometheus, prometheus-node-exporter, fio, curl and python3 (only to make the
# fixtures; the tests read the JSON):
#   apt-get install -y prometheus prometheus-node-exporter fio curl
# Usage: [OUT=dir] scripts/make_prometheus_fixtures.sh [DEVICE]   (default: the device under the repo, e.g. vda)
# Everything listens on 127.0.0.1 only and is stopped on exit; the data dirs are temporary.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-"$here/tests/data/prometheus"}   # OUT=dir writes elsewhere
dev=${1:-$(basename "$(df --output=source "$here" | tail -1)")}
step=10          # query_range step, s
scrape=2         # scrape interval, s
window=20s       # rate() window
work=$(mktemp -d /tmp/ebssim-prom.XXXXXX)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$out"

prometheus-node-exporter --web.listen-address=127.0.0.1:9100 \
    --collector.disable-defaults --collector.diskstats >"$work/node_exporter.log" 2>&1 &
pids+=($!)
cat >"$work/prometheus.yml" <<YML
global:
  scrape_interval: ${scrape}s
scrape_configs:
  - job_name: node
    static_configs:
      - targets: ['127.0.0.1:9100']
YML
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/data" \
    --web.listen-address=127.0.0.1:9090 >"$work/prometheus.log" 2>&1 &
pids+=($!)
for _ in $(seq 60); do
    curl -sf 'http://127.0.0.1:9090/api/v1/query?query=up' | grep -q '"1"' && break
    sleep 1
done

sleep 12   # some idle samples before fio starts
start=$(date -u +%s)
start=$(( (start / step) * step ))
# Three phases of random 4 KiB direct I/O on a local file, at 150, 600 and 300 IOPS (70 % reads).
fio --name=prom --filename="$work/fio.dat" --size=256m --direct=1 --ioengine=psync \
    --rw=randrw --rwmixread=70 --bs=4k --time_based --runtime=30 --rate_iops=150 \
    --name=prom2 --stonewall --filename="$work/fio.dat" --size=256m --direct=1 --ioengine=psync \
    --rw=randrw --rwmixread=70 --bs=4k --time_based --runtime=30 --rate_iops=600 \
    --name=prom3 --stonewall --filename="$work/fio.dat" --size=256m --direct=1 --ioengine=psync \
    --rw=randrw --rwmixread=70 --bs=4k --time_based --runtime=30 --rate_iops=300 \
    --output-format=json --output="$work/fio.json" >/dev/null
sleep 15
end=$(date -u +%s)
end=$(( (end / step) * step ))

metrics="node_disk_reads_completed_total node_disk_writes_completed_total node_disk_read_bytes_total node_disk_written_bytes_total node_disk_io_time_weighted_seconds_total"
query() {  # query_range QUERY FILE
    curl -sf -G 'http://127.0.0.1:9090/api/v1/query_range' --data-urlencode "query=$1" \
        --data-urlencode "start=$start" --data-urlencode "end=$end" --data-urlencode "step=$step" \
        | python3 -m json.tool --indent 1 >"$out/$2"
}
sel="device=\"$dev\""
# The five counters in one result (each series keeps its __name__), and each one's rate() in a
# file of its own (rate() drops the metric name, so the file names it).
query "{__name__=~\"$(echo "$metrics" | tr ' ' '|')\",$sel}" counters.json
for m in $metrics; do
    query "rate($m{$sel}[$window])" "rate_$m.json"
done
curl -sf -G 'http://127.0.0.1:9090/api/v1/query' --data-urlencode "query=node_disk_info" \
    | python3 -m json.tool --indent 1 >"$out/disk_info.json"

cat >"$out/README.md" <<MD
# Prometheus fixtures (node_exporter disk metrics)

Made by \`scripts/make_prometheus_fixtures.sh\` on $(date -u +%Y-%m-%dT%H:%M:%SZ) on this project's
build machine (a VM whose disk is \`$dev\`, virtio, not EBS), with Debian's packages:

- $(prometheus --version 2>&1 | head -1)
- $(prometheus-node-exporter --version 2>&1 | head -1)
- $(fio --version)

node_exporter (\`--collector.disable-defaults --collector.diskstats\`) on 127.0.0.1:9100,
Prometheus on 127.0.0.1:9090 scraping it every ${scrape} s into a temporary data dir; fio ran
three phases of 30 s of random 4 KiB direct I/O (70 % reads) on a 256 MiB file at 150, 600 and
300 IOPS of reads and as many of writes (fio's \`rate_iops\` is per direction); other processes of the machine used the same disk meanwhile.
The HTTP API was queried from $start to $end (Unix s) with step=${step}:

- \`counters.json\`: \`/api/v1/query_range?query={__name__=~"$(echo "$metrics" | tr ' ' '|')",$sel}\`
- \`rate_<metric>.json\`: \`rate(<metric>{$sel}[$window])\` for each of the five
- \`disk_info.json\`: \`/api/v1/query?query=node_disk_info\` (instant)
- \`fio.json\`: fio's own report (\`--output-format=json\`)

node_exporter 1.5.0's \`node_disk_info\` has \`serial\`, \`model\`, \`wwn\`, \`path\` and \`revision\` labels (from
udev's data); on this VM they are empty, and Prometheus drops empty labels, so disk_info.json has no
serial: on an EC2 Nitro instance an EBS volume's serial is its id without the dash (\`vol0123...\`).
The API's JSON is as it returned it, indented by \`python3 -m json.tool --indent 1\`.
MD
cp "$work/fio.json" "$out/fio.json" 2>/dev/null || true
echo "wrote $out"
