// The OpenSSL wrappers against published vectors (FIPS 180-2, RFC 4231, 5869, 7748, 8032, 8439, the
// GCM specification), then round trips and tampering.
#include "protocol/crypto.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <string>

#include "tests/protocol/test_util.hpp"

namespace ncast::proto {
namespace {

using testing::hex;

std::span<const std::uint8_t> text(std::string_view s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

TEST(Crypto, Sha256KnownAnswers) {
  EXPECT_EQ(to_hex(sha256(text("abc"))), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(to_hex(sha256(text(""))), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  Sha256 inc;
  inc.update(text("a"));
  inc.update(text("bc"));
  EXPECT_EQ(to_hex(inc.finish()), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  inc.update(text("abc"));  // reusable after finish
  EXPECT_EQ(to_hex(inc.finish()), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

// Every bit of the four octets is used: over 64 draws each one is seen set and clear (a miss has
// odds of about 2^-58).
TEST(Crypto, RandomU32UsesAllBits) {
  std::uint32_t any = 0, all = 0xFFFFFFFF;
  for (int i = 0; i < 64; ++i) {
    const std::uint32_t v = random_u32();
    any |= v;
    all &= v;
  }
  EXPECT_EQ(any, 0xFFFFFFFFu);
  EXPECT_EQ(all, 0u);
}

TEST(Crypto, HmacRfc4231Case1) {
  const std::vector<std::uint8_t> key(20, 0x0b);
  EXPECT_EQ(to_hex(hmac_sha256(key, text("Hi There"))),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
}

TEST(Crypto, HkdfRfc5869Case1) {
  const std::vector<std::uint8_t> ikm(22, 0x0b);
  const auto salt = hex("000102030405060708090a0b0c");
  const auto info = hex("f0f1f2f3f4f5f6f7f8f9");
  std::vector<std::uint8_t> okm(42, 0xEE);
  hkdf_sha256(salt, ikm, info, okm);
  EXPECT_EQ(to_hex(okm), "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865");
}

TEST(Crypto, X25519Rfc7748) {
  const auto alice_priv = hex("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a");
  const auto bob_priv = hex("5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb");
  X25519KeyPair alice(std::span<const std::uint8_t, 32>(alice_priv.data(), 32));
  X25519KeyPair bob(std::span<const std::uint8_t, 32>(bob_priv.data(), 32));
  EXPECT_EQ(to_hex(alice.public_key()), "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a");
  EXPECT_EQ(to_hex(bob.public_key()), "de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f");
  auto s1 = alice.agree(bob.public_key());
  auto s2 = bob.agree(alice.public_key());
  ASSERT_TRUE(s1 && s2);
  EXPECT_EQ(to_hex(*s1), "4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742");
  EXPECT_EQ(*s1, *s2);
}

TEST(Crypto, X25519RefusesLowOrderKeys) {
  X25519KeyPair mine;
  PublicKey zero{};
  EXPECT_FALSE(mine.agree(zero));
  PublicKey one{};
  one[0] = 1;  // u = 1 has order 4: the result is all zero
  EXPECT_FALSE(mine.agree(one));
}

TEST(Crypto, Ed25519Rfc8032Test1) {
  const auto pub = hex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a");
  const auto sig =
      hex("e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595b"
          "be24655141438e7a100b");
  PublicKey key{};
  Signature s{};
  std::copy(pub.begin(), pub.end(), key.begin());
  std::copy(sig.begin(), sig.end(), s.begin());
  EXPECT_TRUE(ed25519_verify(key, {}, s));
  s[5] ^= 1;
  EXPECT_FALSE(ed25519_verify(key, {}, s));
}

TEST(Crypto, Ed25519SignVerifyAndFiles) {
  const auto id = Ed25519Identity::generate();
  const auto msg = text("the manifest");
  auto sig = id.sign(msg);
  EXPECT_TRUE(ed25519_verify(id.public_key(), msg, sig));
  EXPECT_FALSE(ed25519_verify(id.public_key(), text("the manifesT"), sig));
  EXPECT_FALSE(ed25519_verify(Ed25519Identity::generate().public_key(), msg, sig));

  const auto dir = std::filesystem::temp_directory_path() / ("ncast-key-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = dir / "id.pem";
  const auto created = Ed25519Identity::load_or_create(path);
  EXPECT_EQ((std::filesystem::status(path).permissions() & std::filesystem::perms::all),
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  const auto loaded = Ed25519Identity::load_or_create(path);
  EXPECT_EQ(created.public_key(), loaded.public_key());
  EXPECT_THROW(created.save(path), CryptoError);  // never overwrites
  std::FILE* f = std::fopen((dir / "junk.pem").c_str(), "w");
  std::fputs("not a key\n", f);
  std::fclose(f);
  EXPECT_THROW(Ed25519Identity::load(dir / "junk.pem"), CryptoError);
  EXPECT_THROW(Ed25519Identity::load(dir / "missing.pem"), CryptoError);
  std::filesystem::remove_all(dir);
}

TEST(Crypto, AesGcmKnownAnswer) {
  // GCM specification test case 2: zero key, zero IV, one zero block.
  const std::vector<std::uint8_t> key(16, 0);
  const std::array<std::uint8_t, kIvSize> iv{};
  Aead seal(Suite::aes128_gcm, key, iv, Aead::Direction::seal);
  std::vector<std::uint8_t> packet(16 + kTagSize, 0);
  seal.seal(0, packet.data(), 0, 16);
  EXPECT_EQ(to_hex(packet), "0388dace60b6a392f328c2b971b2fe78ab6e47d42cec13bdf53a67b21257bddf");
  Aead open(Suite::aes128_gcm, key, iv, Aead::Direction::open);
  EXPECT_TRUE(open.open(0, packet.data(), 0, 16));
  EXPECT_EQ(to_hex(std::span(packet).first(16)), "00000000000000000000000000000000");
}

TEST(Crypto, ChaCha20Poly1305Rfc8439) {
  const auto key = hex("808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f");
  const auto iv_v = hex("070000004041424344454647");
  std::array<std::uint8_t, kIvSize> iv{};
  std::copy(iv_v.begin(), iv_v.end(), iv.begin());
  const auto aad = hex("50515253c0c1c2c3c4c5c6c7");
  const std::string pt =
      "Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be "
      "it.";
  std::vector<std::uint8_t> packet(aad);
  packet.insert(packet.end(), pt.begin(), pt.end());
  packet.resize(packet.size() + kTagSize);
  Aead seal(Suite::chacha20_poly1305, key, iv, Aead::Direction::seal);
  seal.seal(0, packet.data(), aad.size(), pt.size());
  EXPECT_EQ(
      to_hex(std::span(packet).subspan(aad.size())),
      "d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d63dbea45e8ca9671282fafb69da92728b1a71de0a9e06"
      "0b2905d6a5b67ecd3b3692ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc3ff4def08e4b7a9de576d265"
      "86cec64b61161ae10b594f09e26a7e902ecbd0600691");
}

class AeadSuites : public ::testing::TestWithParam<Suite> {};

TEST_P(AeadSuites, RoundTripAndEveryTamperFails) {
  std::mt19937_64 rng(static_cast<unsigned>(GetParam()));
  const auto key = testing::random_bytes_of(key_size(GetParam()), rng);
  std::array<std::uint8_t, kIvSize> iv{};
  for (auto& b : iv) b = static_cast<std::uint8_t>(rng());
  Aead seal(GetParam(), key, iv, Aead::Direction::seal);
  Aead open(GetParam(), key, iv, Aead::Direction::open);
  for (std::uint64_t number : {0ull, 1ull, 2ull, 1000ull, (1ull << 40) + 3}) {
    const std::size_t aad = 20, body = 1 + rng() % 1500;
    auto plain = testing::random_bytes_of(aad + body + kTagSize, rng);
    auto packet = plain;
    seal.seal(number, packet.data(), aad, body);
    EXPECT_TRUE(std::equal(plain.begin(), plain.begin() + aad, packet.begin()));  // AAD stays clear
    EXPECT_FALSE(std::equal(plain.begin() + aad, plain.begin() + aad + body, packet.begin() + aad));
    auto good = packet;
    ASSERT_TRUE(open.open(number, good.data(), aad, body));
    EXPECT_TRUE(std::equal(plain.begin(), plain.begin() + aad + body, good.begin()));
    EXPECT_FALSE([&] {
      auto p = packet;
      return open.open(number + 1, p.data(), aad, body);
    }());  // wrong nonce
    for (std::size_t i :
         {std::size_t{0}, aad - 1, aad, aad + body / 2, aad + body - 1, aad + body, packet.size() - 1}) {
      auto p = packet;
      p[i] ^= 0x40;
      EXPECT_FALSE(open.open(number, p.data(), aad, body)) << "flip at " << i;
    }
  }
  Aead other(GetParam(), testing::random_bytes_of(key_size(GetParam()), rng), iv, Aead::Direction::open);
  auto p = testing::random_bytes_of(20 + 64 + kTagSize, rng);
  seal.seal(7, p.data(), 20, 64);
  EXPECT_FALSE(other.open(7, p.data(), 20, 64));
}

INSTANTIATE_TEST_SUITE_P(Suites, AeadSuites, ::testing::Values(Suite::aes128_gcm, Suite::chacha20_poly1305),
                         [](const auto& info) {
                           return std::string(info.param == Suite::aes128_gcm ? "aes" : "chacha");
                         });

TEST(Crypto, AeadRejectsWrongKeyLengthAndDirection) {
  std::array<std::uint8_t, kIvSize> iv{};
  EXPECT_THROW(Aead(Suite::aes128_gcm, std::vector<std::uint8_t>(32), iv, Aead::Direction::seal), CryptoError);
  Aead open(Suite::aes128_gcm, std::vector<std::uint8_t>(16), iv, Aead::Direction::open);
  std::vector<std::uint8_t> p(40);
  EXPECT_THROW(open.seal(0, p.data(), 4, 20), CryptoError);
}

TEST(Crypto, Hex) {
  EXPECT_EQ(to_hex(hex("00ff10Ab")), "00ff10ab");
  EXPECT_FALSE(from_hex("abc"));
  EXPECT_FALSE(from_hex("zz"));
}

}  // namespace
}  // namespace ncast::proto
