"""What can be checked of docker/ without a Docker engine: every compose file
parses; every endpoint a target file names is a service of the compose file
that mounts it, listening on (exposing) that port; the Dockerfile installs
exactly the packages lab.sh installs (harness/scripts/packages.txt)."""
import json
import pathlib
import re
import sys

import yaml

root = pathlib.Path(sys.argv[1])
docker = root / "docker"
errors = []


def packages(text):
    names = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            names.append(line)
    return names


# The package list: lab.sh and the Dockerfile both read the same file.
package_file = root / "harness/scripts/packages.txt"
listed = packages(package_file.read_text())
if not listed:
    errors.append(f"{package_file}: no packages")
lab_sh = (root / "harness/scripts/lab.sh").read_text()
if "harness/scripts/packages.txt" not in lab_sh or re.search(r"^packages=\(", lab_sh, re.M):
    errors.append("harness/scripts/lab.sh: must read its packages from harness/scripts/packages.txt")
dockerfile = (docker / "Dockerfile").read_text()
if not re.search(r"^COPY\s+harness/scripts/packages\.txt\s+(\S+)", dockerfile, re.M):
    errors.append("docker/Dockerfile: does not COPY harness/scripts/packages.txt")
else:
    copied_to = re.search(r"^COPY\s+harness/scripts/packages\.txt\s+(\S+)", dockerfile, re.M).group(1)
    install = [l for l in re.split(r"(?m)^RUN", dockerfile) if "apt-get install" in l]
    if not install or copied_to not in install[0]:
        errors.append("docker/Dockerfile: its apt-get install does not read " + copied_to)
if "lab.sh setup" not in dockerfile:
    errors.append("docker/Dockerfile: does not build with harness/scripts/lab.sh setup")

composes = sorted(docker.glob("compose*.yml"))
if len(composes) < 4:
    errors.append(f"docker/: expected compose files for 3 topologies beside compose.yml, found {composes}")
targets_seen = set()
for compose in composes:
    try:
        doc = yaml.safe_load(compose.read_text())
    except yaml.YAMLError as e:
        errors.append(f"{compose}: does not parse: {e}")
        continue
    services = doc.get("services") or {}
    if not services:
        errors.append(f"{compose}: no services")
    for name, service in services.items():
        if not isinstance(service, dict) or not ("image" in service or "build" in service):
            errors.append(f"{compose}: service {name}: neither image nor build")
        for dep in (service or {}).get("depends_on", []):
            if dep not in services:
                errors.append(f"{compose}: service {name} depends on unknown service {dep}")
    for name, service in services.items():
        for volume in service.get("volumes", []):
            source, _, rest = volume.partition(":")
            if not source.startswith("./targets/"):
                continue
            target_file = (compose.parent / source).resolve()
            targets_seen.add(target_file)
            mounted_at = rest.split(":")[0]
            if mounted_at not in " ".join(map(str, service.get("command", []))):
                errors.append(f"{compose}: service {name} mounts {source} at {mounted_at} but does not --target it")
            target = json.loads(target_file.read_text())
            for field in ("masters", "replicas", "sentinels"):
                for endpoint in target.get(field, []):
                    host, _, port = endpoint.rpartition(":")
                    if host not in services:
                        errors.append(f"{target_file.name}: {field}: {endpoint}: no service {host} in {compose.name}")
                        continue
                    exposed = [str(p).split("/")[0] for p in services[host].get("expose", [])]
                    exposed += [str(p).rsplit(":", 1)[-1] for p in services[host].get("ports", [])]
                    if port not in exposed:
                        errors.append(f"{target_file.name}: {field}: {endpoint}: {compose.name} service {host} exposes {exposed}, not {port}")
for target_file in sorted((docker / "targets").glob("*.json")):
    if target_file.resolve() not in targets_seen:
        errors.append(f"{target_file}: no compose file mounts it")

for e in errors:
    print("docker files:", e)
sys.exit(1 if errors else 0)
