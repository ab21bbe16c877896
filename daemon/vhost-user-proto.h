/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vhost-user-proto.h — the vhost-user wire protocol, as sluice-fs speaks it.
 *
 * Written from QEMU's docs/interop/vhost-user.rst (message ids, flags and
 * payload layouts are fixed by that spec, little-endian on the wire; x86 and
 * every host QEMU runs vhost-user on is little-endian).  Only what a
 * vhost-user-fs device needs is here. */
#pragma once

#include <stdint.h>

enum vu_request {
        VHOST_USER_NONE = 0,
        VHOST_USER_GET_FEATURES = 1,
        VHOST_USER_SET_FEATURES = 2,
        VHOST_USER_SET_OWNER = 3,
        VHOST_USER_RESET_OWNER = 4,
        VHOST_USER_SET_MEM_TABLE = 5,
        VHOST_USER_SET_LOG_BASE = 6,
        VHOST_USER_SET_LOG_FD = 7,
        VHOST_USER_SET_VRING_NUM = 8,
        VHOST_USER_SET_VRING_ADDR = 9,
        VHOST_USER_SET_VRING_BASE = 10,
        VHOST_USER_GET_VRING_BASE = 11,
        VHOST_USER_SET_VRING_KICK = 12,
        VHOST_USER_SET_VRING_CALL = 13,
        VHOST_USER_SET_VRING_ERR = 14,
        VHOST_USER_GET_PROTOCOL_FEATURES = 15,
        VHOST_USER_SET_PROTOCOL_FEATURES = 16,
        VHOST_USER_GET_QUEUE_NUM = 17,
        VHOST_USER_SET_VRING_ENABLE = 18,
        VHOST_USER_SEND_RARP = 19,
        VHOST_USER_NET_SET_MTU = 20,
        VHOST_USER_SET_BACKEND_REQ_FD = 21,
        VHOST_USER_IOTLB_MSG = 22,
        VHOST_USER_SET_VRING_ENDIAN = 23,
        VHOST_USER_GET_CONFIG = 24,
        VHOST_USER_SET_CONFIG = 25,
        VHOST_USER_GET_INFLIGHT_FD = 31,
        VHOST_USER_SET_INFLIGHT_FD = 32,
        VHOST_USER_RESET_DEVICE = 34,
        VHOST_USER_VRING_KICK = 35,
        VHOST_USER_GET_MAX_MEM_SLOTS = 36,
        VHOST_USER_ADD_MEM_REG = 37,
        VHOST_USER_REM_MEM_REG = 38,
        VHOST_USER_SET_STATUS = 39,
        VHOST_USER_GET_STATUS = 40,
        VHOST_USER_MAX,
};

/* Protocol feature bits (GET/SET_PROTOCOL_FEATURES). */
enum vu_protocol_feature {
        VHOST_USER_PROTOCOL_F_MQ = 0,
        VHOST_USER_PROTOCOL_F_LOG_SHMFD = 1,
        VHOST_USER_PROTOCOL_F_RARP = 2,
        VHOST_USER_PROTOCOL_F_REPLY_ACK = 3,
        VHOST_USER_PROTOCOL_F_MTU = 4,
        VHOST_USER_PROTOCOL_F_BACKEND_REQ = 5,
        VHOST_USER_PROTOCOL_F_CROSS_ENDIAN = 6,
        VHOST_USER_PROTOCOL_F_CRYPTO_SESSION = 7,
        VHOST_USER_PROTOCOL_F_PAGEFAULT = 8,
        VHOST_USER_PROTOCOL_F_CONFIG = 9,
        VHOST_USER_PROTOCOL_F_BACKEND_SEND_FD = 10,
        VHOST_USER_PROTOCOL_F_HOST_NOTIFIER = 11,
        VHOST_USER_PROTOCOL_F_INFLIGHT_SHMFD = 12,
        VHOST_USER_PROTOCOL_F_RESET_DEVICE = 13,
        VHOST_USER_PROTOCOL_F_INBAND_NOTIFICATIONS = 14,
        VHOST_USER_PROTOCOL_F_CONFIGURE_MEM_SLOTS = 15,
        VHOST_USER_PROTOCOL_F_STATUS = 16,
};

/* The virtio feature bit that says "protocol features are negotiated". */
#define VHOST_USER_F_PROTOCOL_FEATURES 30

/* Header flags: bits 0-1 version (always 1), bit 2 reply, bit 3 need reply. */
#define VHOST_USER_VERSION         0x1u
#define VHOST_USER_VERSION_MASK    0x3u
#define VHOST_USER_REPLY_MASK      (1u << 2)
#define VHOST_USER_NEED_REPLY_MASK (1u << 3)

/* SET_VRING_KICK/CALL/ERR payload: bits 0-7 the ring index, bit 8 "no fd". */
#define VHOST_USER_VRING_IDX_MASK  0xffu
#define VHOST_USER_VRING_NOFD_MASK (1u << 8)

/* SET_MEM_TABLE carries at most this many regions (fds) in one message. */
#define VHOST_USER_MEMORY_BASELINE_NREGIONS 8
/* At most this many fds ride on one message. */
#define VHOST_USER_MAX_FDS 8
#define VHOST_USER_MAX_CONFIG_SIZE 256

struct vu_msg_header {
        uint32_t request;
        uint32_t flags;
        uint32_t size;   /* payload bytes that follow */
} __attribute__((packed));

struct vu_vring_state {
        uint32_t index;
        uint32_t num;
} __attribute__((packed));

struct vu_vring_addr {
        uint32_t index;
        uint32_t flags;     /* bit 0: VHOST_VRING_F_LOG (dirty logging; not supported) */
        uint64_t desc_user_addr;
        uint64_t used_user_addr;
        uint64_t avail_user_addr;
        uint64_t log_guest_addr;
} __attribute__((packed));

struct vu_memory_region {
        uint64_t guest_phys_addr;
        uint64_t memory_size;
        uint64_t user_addr;     /* the frontend's virtual address of the region */
        uint64_t mmap_offset;   /* where the region starts in the fd */
} __attribute__((packed));

struct vu_memory {
        uint32_t nregions;
        uint32_t padding;
        struct vu_memory_region regions[VHOST_USER_MEMORY_BASELINE_NREGIONS];
} __attribute__((packed));

struct vu_memory_single {
        uint64_t padding;
        struct vu_memory_region region;
} __attribute__((packed));

struct vu_config {
        uint32_t offset;
        uint32_t size;
        uint32_t flags;
        uint8_t region[VHOST_USER_MAX_CONFIG_SIZE];
} __attribute__((packed));

/* The largest payload any message we accept can have. */
union vu_payload {
        uint64_t u64;
        struct vu_vring_state state;
        struct vu_vring_addr addr;
        struct vu_memory memory;
        struct vu_memory_single mem_reg;
        struct vu_config config;
};

struct vu_msg {
        struct vu_msg_header hdr;
        union vu_payload payload;
} __attribute__((packed));
