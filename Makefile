# SPDX-License-Identifier: GPL-2.0-or-later
# Thin wrapper around meson: `make demo` and `make check` do all the set-up on a
# fresh Debian 12 machine (run as root, or with sudo available for apt).

BUILD      ?= build
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
MESON_ARGS ?=

# Everything Sluice builds with and is tested with, by Debian package name.
DEPS_BUILD = meson ninja-build pkg-config gcc libc6-dev gettext unicode-data \
	libglib2.0-dev libglib2.0-bin libsystemd-dev libseccomp-dev \
	libvirt-dev libvirt-glib-1.0-dev libgtk-4-dev libadwaita-1-dev libnotify-dev \
	libdbusmenu-glib-dev desktop-file-utils libjson-glib-dev libacl1-dev libxml2-dev python3
# The Debian packages (make deb, the deb suite): built with debhelper, checked with lintian.
DEPS_BUILD += debhelper dpkg-dev lintian
DEPS_TEST = qemu-system-x86 qemu-system-common linux-image-amd64 busybox-static kmod cpio xz-utils \
	libvirt-daemon libvirt-daemon-driver-qemu libvirt-clients \
	dbus dbus-x11 xvfb xauth xdotool imagemagick xfce4-panel dunst acl attr fio \
	python3 passwd util-linux procps psmisc clang systemd
# The other builds make check checks (tests/build): clang is above; ccache
# keeps their objects across runs and fresh clones.
DEPS_TEST += ccache
# rsync in the test guest (tests/guest/build-image.sh): guest root's rsync -a into a share.
DEPS_TEST += rsync
# The session bus a systemd --user starts (dbus.socket): tests/session.
DEPS_TEST += dbus-user-session
# A font with Korean glyphs: the applet-translations test checks the Korean window is drawn, not tofu.
DEPS_TEST += fonts-wqy-microhei
# Counting instructions and system calls per request: tests/cost, bench/cost-run.sh.
DEPS_TEST += valgrind strace
# libvirt's QEMU under AppArmor: apparmor_parser and python3-apparmor check the snippet (tests/apparmor).
DEPS_TEST += apparmor python3-apparmor
# The SELinux module (make selinux, the selinux suite): compiled with the reference policy's
# devel Makefile; linked, in the suite, into Debian's reference policy with secilc.
DEPS_TEST += checkpolicy semodule-utils selinux-policy-dev secilc selinux-policy-default

.PHONY: all deps build check demo bench fuzz clean deb

all: build

deps:
	@missing=$$(for p in $(DEPS_BUILD) $(DEPS_TEST); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "Installing:" $$missing; \
		SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
		$$SUDO apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing; \
	fi

# A development build: warnings are errors (meson.build's default) and the
# test hooks are in, as make check needs them (a release leaves them out).
$(BUILD)/build.ninja:
	meson setup $(BUILD) -Dtest_hooks=true $(MESON_ARGS)

build: deps $(BUILD)/build.ninja
	meson compile -C $(BUILD)

# All suites on the normal build, then the daemon's and the service's suites
# again under AddressSanitizer + UBSan.
check: build
	tests/run-suites.sh $(BUILD) $(ASAN_BUILD)

# The daemon's unit and frontend suites under ThreadSanitizer alone (make
# check runs them too, last; see tests/run-suites.sh).
.PHONY: tsan clean-tsan
tsan: deps
	tests/run-suites.sh --tsan $(TSAN_BUILD)
clean: clean-tsan
clean-tsan:
	rm -rf $(TSAN_BUILD)

demo: build
	tests/guest/demo.sh $(BUILD)

# The Debian packages, built from a copy of the tree (the files git tracks)
# with dpkg-buildpackage; they land in DEB_OUT, whose paths it prints.
# DEB_BUILD_OPTIONS as dpkg-buildpackage reads it (default: parallel on
# every core, the unit tests run).
DEB_OUT ?= build-deb
deb: deps
	tests/deb/build-debs.sh $(DEB_OUT)

bench: build
	bench/proto-run.sh $(BUILD)
	bench/run.sh $(BUILD)

# The libFuzzer targets (tests/fuzz/README.md), FUZZ_SECONDS each.
FUZZ_BUILD   ?= build-fuzz
FUZZ_SECONDS ?= 600
fuzz: deps
	tests/fuzz/run-fuzz.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD) $(DEB_OUT) $(SELINUX_BUILD)

# A soak of minutes, not part of check (bench/soak.sh): a Linux 6.12 guest, 2
# vCPUs, 2 request queues, mixed operations on thousands of files against a
# model; the worker's fds and RSS must stay flat.
SOAK_MINUTES ?= 10
.PHONY: soak
soak: build
	bench/soak.sh $(BUILD) $(SOAK_MINUTES)

# The SELinux policy module that lets a confined QEMU (svirt_t, svirt_tcg_t)
# connect to the workers' sockets (data/selinux/sluice.te), built into
# SELINUX_BUILD with the devel Makefile of the installed policy: Debian's
# selinux-policy-dev and Fedora's selinux-policy-devel both put it at
# SELINUX_DEVEL, so the same command builds a module for the policy it will
# be loaded into. `make selinux && sudo make selinux-install` loads it;
# selinux-uninstall removes it.
SELINUX_BUILD ?= build-selinux
SELINUX_DEVEL ?= /usr/share/selinux/devel/Makefile
.PHONY: selinux selinux-install selinux-uninstall
selinux: $(SELINUX_BUILD)/sluice.pp

$(SELINUX_BUILD)/sluice.pp: data/selinux/sluice.te
	@test -f $(SELINUX_DEVEL) || { echo "no $(SELINUX_DEVEL):" \
		"install selinux-policy-dev (Debian) or selinux-policy-devel (Fedora)" >&2; exit 1; }
	mkdir -p $(SELINUX_BUILD)
	cp data/selinux/sluice.te $(SELINUX_BUILD)/
	$(MAKE) -C $(SELINUX_BUILD) -f $(SELINUX_DEVEL) sluice.pp

selinux-install: $(SELINUX_BUILD)/sluice.pp
	semodule -i $(SELINUX_BUILD)/sluice.pp

selinux-uninstall:
	semodule -r sluice
