# hash6.py: the six hash methods of two 37-byte IPv6 keys, computed independently of
# package ecmp (Python standard library: zlib.crc32, binascii.crc_hqx; CRC-16/ARC,
# xor16, fmix32 and Toeplitz written out from their definitions). hash_test.go's
# TestHashFixedKeys6 pins its output: python3 switchmodel/ecmp/testdata/hash6.py
import zlib, binascii, ipaddress, struct
key = ipaddress.ip_address("2001:db8::1").packed + ipaddress.ip_address("2001:db8:1::2").packed + bytes([6]) + struct.pack(">HH", 49152, 4791)
icmp = ipaddress.ip_address("fd00::1").packed + ipaddress.ip_address("ff02::1").packed + bytes([58, 0, 0, 0, 0])
salt = bytes.fromhex("deadbeef")
def fmix32(h):
    h ^= h >> 16; h = h * 0x85ebca6b & 0xffffffff; h ^= h >> 13; h = h * 0xc2b2ae35 & 0xffffffff; return h ^ h >> 16
def arc(p):
    c = 0
    for b in p:
        c ^= b
        for _ in range(8): c = c >> 1 ^ 0xA001 if c & 1 else c >> 1
    return c
def xor16(p):
    p = p + b"\0"; return __import__("functools").reduce(lambda x, i: x ^ (p[i] << 8 | p[i+1]), range(0, len(p), 2), 0)
K = bytes.fromhex("6d5a56da255b0ec24167253d43a38fb0d0ca2bcbae7b30b477cb2da38030f20c6a42b73bbeac01fa")
def toeplitz(inp):
    kb = int.from_bytes(K, "big"); r = 0
    for i in range(len(inp) * 8):
        if inp[i // 8] >> (7 - i % 8) & 1: r ^= kb >> (320 - 32 - i) & 0xffffffff
    return r
for k in (key, icmp):
    tz = k[0:32] + (k[33:37] if k[33:37] != bytes(4) else b"")
    print(len(k), k.hex())
    print("crc32 %#010x crc32WithSalt %#010x (salted crc %#010x) crc16 %#06x crc16Ccitt %#06x xor16 %#06x toeplitz %#010x" % (
        zlib.crc32(k), fmix32(zlib.crc32(salt + k)), zlib.crc32(salt + k), arc(k), binascii.crc_hqx(k, 0xffff), xor16(k), toeplitz(tz)))
# sanity: the check values and Microsoft's IPv4 and IPv6 vectors
assert zlib.crc32(b"123456789") == 0xCBF43926 and arc(b"123456789") == 0xBB3D and binascii.crc_hqx(b"123456789", 0xffff) == 0x29B1
assert toeplitz(bytes([66,9,149,187,161,142,100,80]) + struct.pack(">HH", 2794, 1766)) == 0x51ccc178
assert toeplitz(ipaddress.ip_address("3ffe:2501:200:1fff::7").packed + ipaddress.ip_address("3ffe:2501:200:3::1").packed + struct.pack(">HH", 2794, 1766)) == 0x40207d3d
