// The function symbols of a module (tools/elfsyms.c): this test program's own, and made-up ELF
// files that lie -- headers and tables past the file's end, sizes that overflow, a table of the
// wrong entry size, no section headers at all -- which load as far as they are true, never read
// out of bounds (the test runs under the valgrind and sanitizer setups).
#include <catch2/catch.hpp>

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "elfsyms.h"

extern "C" __attribute__((noinline)) int elfsyms_probe_fn(int x)
{
	return x * 11 + 5;
}

namespace {

// A file holding bytes, removed at the end of the scope; fd open for reading.
struct temp_file {
	std::string path;
	int fd = -1;
	explicit temp_file(const std::vector<unsigned char> &bytes)
	{
		char name[] = "/tmp/elfsyms-XXXXXX";
		int w = mkstemp(name);
		REQUIRE(w >= 0);
		path = name;
		REQUIRE(write(w, bytes.data(), bytes.size()) == (ssize_t)bytes.size());
		close(w);
		fd = open(name, O_RDONLY);
		REQUIRE(fd >= 0);
	}
	~temp_file()
	{
		close(fd);
		unlink(path.c_str());
	}
};

// An ELF file: header, section headers (null, the symbol table) at 64, symbols after them.
struct fake_elf {
	Elf64_Ehdr eh{};
	Elf64_Shdr sh[2]{};
	std::vector<Elf64_Sym> syms;

	fake_elf()
	{
		memcpy(eh.e_ident, ELFMAG, SELFMAG);
		eh.e_ident[EI_CLASS] = ELFCLASS64;
		eh.e_ident[EI_DATA] = ELFDATA2LSB;
		eh.e_type = ET_DYN;
		eh.e_shoff = sizeof eh;
		eh.e_shentsize = sizeof(Elf64_Shdr);
		eh.e_shnum = 2;
		sh[1].sh_type = SHT_DYNSYM;
		sh[1].sh_entsize = sizeof(Elf64_Sym);
		sh[1].sh_offset = sizeof eh + sizeof sh;
	}
	void add(uint64_t value, uint64_t size, unsigned type = STT_FUNC, uint16_t shndx = 1)
	{
		Elf64_Sym s{};
		s.st_value = value;
		s.st_size = size;
		s.st_info = ELF64_ST_INFO(STB_GLOBAL, type);
		s.st_shndx = shndx;
		syms.push_back(s);
	}
	std::vector<unsigned char> bytes(bool fix_size = true)
	{
		if (fix_size)
			sh[1].sh_size = syms.size() * sizeof(Elf64_Sym);
		std::vector<unsigned char> b(sizeof eh + sizeof sh + syms.size() * sizeof(Elf64_Sym));
		memcpy(b.data(), &eh, sizeof eh);
		memcpy(b.data() + sizeof eh, sh, sizeof sh);
		if (!syms.empty())
			memcpy(b.data() + sizeof eh + sizeof sh, syms.data(),
			       syms.size() * sizeof(Elf64_Sym));
		return b;
	}
};

struct elfsyms *load(const std::vector<unsigned char> &bytes, int *rc)
{
	temp_file f(bytes);
	struct elfsyms *t = nullptr;
	*rc = elfsyms_load(f.fd, &t);
	return t;
}

} // namespace

TEST_CASE("elfsyms: this program's functions")
{
	int fd = open("/proc/self/exe", O_RDONLY);
	REQUIRE(fd >= 0);
	struct elfsyms *t = nullptr;
	REQUIRE(elfsyms_load(fd, &t) == 0);
	close(fd);
	CHECK(elfsyms_count(t) > 10);
	Dl_info info;
	struct link_map *lm = nullptr;
	REQUIRE(dladdr1((void *)elfsyms_probe_fn, &info, (void **)&lm, RTLD_DL_LINKMAP) != 0);
	uint64_t addr = (uint64_t)(uintptr_t)elfsyms_probe_fn - (uint64_t)lm->l_addr;
	uint64_t start = 0;
	CHECK(elfsyms_contains(t, addr, &start));
	CHECK(start == addr);
	CHECK(elfsyms_contains(t, addr + 1, &start));
	CHECK(start == addr);
	elfsyms_free(t);
}

TEST_CASE("elfsyms: containment of the nearest symbol before an address")
{
	fake_elf e;
	e.add(0x1000, 0x10);             // tiny
	e.add(0x2000, 0x100);            // a function, and a smaller alias at its start
	e.add(0x2000, 0x8);
	e.add(0x3000, 0x40, STT_OBJECT); // data: not a function
	e.add(0x4000, 0x40, STT_FUNC, SHN_UNDEF);
	e.add(0x5000, 0);                // no size: no range
	e.add(0x6000, 0x20, STT_GNU_IFUNC);
	e.add(UINT64_MAX - 4, 0x10);     // wraps: dropped
	int rc;
	struct elfsyms *t = load(e.bytes(), &rc);
	REQUIRE(rc == 0);
	CHECK(elfsyms_count(t) == 3);
	uint64_t start = 0;
	CHECK(!elfsyms_contains(t, 0xfff, nullptr));
	CHECK(elfsyms_contains(t, 0x1000, &start));
	CHECK(start == 0x1000);
	CHECK(elfsyms_contains(t, 0x100f, nullptr));
	CHECK(!elfsyms_contains(t, 0x1010, nullptr)); // just past tiny
	CHECK(!elfsyms_contains(t, 0x1fff, nullptr)); // far past it
	CHECK(elfsyms_contains(t, 0x20ff, &start));   // the larger symbol at 0x2000
	CHECK(start == 0x2000);
	CHECK(!elfsyms_contains(t, 0x3010, nullptr));
	CHECK(!elfsyms_contains(t, 0x4010, nullptr));
	CHECK(!elfsyms_contains(t, 0x5000, nullptr));
	CHECK(elfsyms_contains(t, 0x6010, nullptr));
	CHECK(!elfsyms_contains(t, UINT64_MAX, nullptr));
	CHECK(!elfsyms_contains(nullptr, 0x1000, nullptr));
	elfsyms_free(t);
}

TEST_CASE("elfsyms: files that lie")
{
	int rc;
	SECTION("not ELF, or too short") {
		CHECK(load({ 'h', 'i' }, &rc) == nullptr);
		CHECK(rc == -ENOEXEC);
		fake_elf e;
		auto b = e.bytes();
		b.resize(40);
		CHECK(load(b, &rc) == nullptr);
		CHECK(rc == -ENOEXEC);
		b = e.bytes();
		b[EI_CLASS] = ELFCLASS32;
		CHECK(load(b, &rc) == nullptr);
		CHECK(rc == -ENOEXEC);
	}
	SECTION("section headers past the end") {
		fake_elf e;
		e.add(0x1000, 0x10);
		e.eh.e_shoff = 1ull << 40;
		CHECK(load(e.bytes(), &rc) == nullptr);
		CHECK(rc == -EINVAL);
		e.eh.e_shoff = UINT64_MAX - 8;
		CHECK(load(e.bytes(), &rc) == nullptr);
		CHECK(rc == -EINVAL);
		e.eh.e_shoff = sizeof(Elf64_Ehdr);
		e.eh.e_shnum = 65535;
		CHECK(load(e.bytes(), &rc) == nullptr);
		CHECK(rc == -EINVAL);
		e.eh.e_shnum = 2;
		e.eh.e_shentsize = 32;
		CHECK(load(e.bytes(), &rc) == nullptr);
		CHECK(rc == -EINVAL);
	}
	SECTION("no section headers (sstrip): no symbols") {
		fake_elf e;
		e.eh.e_shoff = 0;
		e.eh.e_shnum = 0;
		struct elfsyms *t = load(e.bytes(), &rc);
		REQUIRE(rc == 0);
		CHECK(elfsyms_count(t) == 0);
		CHECK(!elfsyms_contains(t, 0, nullptr));
		elfsyms_free(t);
	}
	SECTION("a table larger than the file is read to the file's end") {
		fake_elf e;
		e.add(0x1000, 0x10);
		e.add(0x2000, 0x10);
		e.sh[1].sh_size = UINT64_MAX - 100;
		struct elfsyms *t = load(e.bytes(false), &rc);
		REQUIRE(rc == 0);
		CHECK(elfsyms_count(t) == 2);
		elfsyms_free(t);
		e.sh[1].sh_offset = UINT64_MAX - 10;
		t = load(e.bytes(false), &rc);
		REQUIRE(rc == 0);
		CHECK(elfsyms_count(t) == 0);
		elfsyms_free(t);
	}
	SECTION("a table of the wrong entry size is not read") {
		fake_elf e;
		e.add(0x1000, 0x10);
		e.sh[1].sh_entsize = 16;
		struct elfsyms *t = load(e.bytes(), &rc);
		REQUIRE(rc == 0);
		CHECK(elfsyms_count(t) == 0);
		elfsyms_free(t);
	}
}
