// The addr2line symbolizer (tools/symbolize.c, tools/addr2line.c) on this test program itself:
// the names addr2line gives by hand, one process per module and a cache, the cap on live
// processes (least recently used stopped first), every process reaped and every pipe closed,
// and stand-in addr2line scripts that are missing, die or hang. binutils is always here: the
// compiler that built this test needs its assembler and linker.
#include <catch2/catch.hpp>

#include <dirent.h>
#include <dlfcn.h>
#include <link.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "symbolize.h"

extern "C" {
__attribute__((noinline)) int sym_site_a(int x)
{
	return x * 3 + 1;
}
__attribute__((noinline)) int sym_site_b(int x)
{
	return x * 5 + 2;
}
__attribute__((noinline)) int sym_site_c(int x)
{
	return x * 7 + 3;
}
}

namespace {

std::string self_exe()
{
	char buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
	REQUIRE(n > 0);
	return std::string(buf, (size_t)n);
}

// The offset of fn in this program, as the wrapper library records it (dladdr).
uint64_t offset_of(int (*fn)(int))
{
	Dl_info info;
	REQUIRE(dladdr((void *)fn, &info) != 0);
	return (uint64_t)((uintptr_t)fn - (uintptr_t)info.dli_fbase);
}

// addr2line -f -C -e module ADDR, run by hand, named as the report names it; ADDR is the file
// address of offset in this program (its run-time address less the load bias).
std::string by_hand(const std::string &module, uint64_t offset)
{
	Dl_info info;
	struct link_map *lm = nullptr;
	REQUIRE(dladdr1((void *)sym_site_a, &info, (void **)&lm, RTLD_DL_LINKMAP) != 0);
	uint64_t addr = offset + (uint64_t)(uintptr_t)info.dli_fbase - (uint64_t)lm->l_addr;
	char cmd[PATH_MAX + 64];
	snprintf(cmd, sizeof cmd, "addr2line -f -C -e '%s' 0x%llx", module.c_str(),
		 (unsigned long long)addr);
	FILE *p = popen(cmd, "r");
	REQUIRE(p);
	char fn[512] = "", loc[512] = "";
	bool two = fgets(fn, sizeof fn, p) && fgets(loc, sizeof loc, p);
	REQUIRE(pclose(p) == 0);
	REQUIRE(two);
	fn[strcspn(fn, "\n")] = 0;
	loc[strcspn(loc, "\n")] = 0;
	if (char *d = strstr(loc, " (discriminator"))
		*d = 0;
	if (loc[0] && strncmp(loc, "??", 2) && !strstr(loc, ":?") && !strstr(loc, ":0"))
		return strrchr(loc, '/') ? strrchr(loc, '/') + 1 : loc;
	return strcmp(fn, "??") ? fn : "";
}

int open_fds()
{
	int n = 0;
	DIR *d = opendir("/proc/self/fd");
	REQUIRE(d);
	while (struct dirent *e = readdir(d))
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1; // the directory's own
}

// No child left, running or unreaped.
bool no_children()
{
	return waitpid(-1, nullptr, WNOHANG) == -1 && errno == ECHILD;
}

// A scratch directory, removed with its files.
struct scratch {
	std::string dir;
	scratch()
	{
		char tmpl[] = "/tmp/test-symbolize-XXXXXX";
		REQUIRE(mkdtemp(tmpl));
		dir = tmpl;
	}
	~scratch()
	{
		std::string cmd = "rm -rf '" + dir + "'";
		(void)!system(cmd.c_str());
	}
	// An executable script named name with body after "#!/bin/sh".
	std::string script(const char *name, const char *body)
	{
		std::string path = dir + "/" + name;
		FILE *f = fopen(path.c_str(), "w");
		REQUIRE(f);
		fprintf(f, "#!/bin/sh\n%s\n", body);
		fclose(f);
		REQUIRE(chmod(path.c_str(), 0755) == 0);
		return path;
	}
	// Another name for this program (a distinct module to the symbolizer).
	std::string link_self(const char *name)
	{
		std::string path = dir + "/" + name;
		REQUIRE(symlink(self_exe().c_str(), path.c_str()) == 0);
		return path;
	}
};

// A symbolizer with its warnings in a temporary file, closed at the end of the scope.
struct sym {
	struct symbolizer *s = nullptr;
	FILE *warn = tmpfile();
	explicit sym(symbolizer_config cfg = {})
	{
		REQUIRE(warn);
		cfg.who = "test";
		cfg.warn = warn;
		REQUIRE(symbolizer_open(&s, &cfg) == 0);
	}
	~sym()
	{
		symbolizer_close(s);
		fclose(warn);
	}
	std::string name(const std::string &module, uint64_t offset, int *rc = nullptr)
	{
		char out[256] = "unchanged";
		int r = symbolize_addr2line(s, module.c_str(), offset, out, sizeof out);
		if (rc)
			*rc = r;
		return r == 0 ? out : "";
	}
	symbolizer_stats stats()
	{
		symbolizer_stats st;
		symbolizer_get_stats(s, &st);
		return st;
	}
	std::vector<std::string> warnings()
	{
		std::vector<std::string> lines;
		char line[1024];
		rewind(warn);
		while (fgets(line, sizeof line, warn))
			lines.push_back(line);
		return lines;
	}
};

double seconds_since(std::chrono::steady_clock::time_point t0)
{
	return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

} // namespace

TEST_CASE("symbolize: names as addr2line by hand")
{
	REQUIRE(sym_site_a(1) + sym_site_b(1) + sym_site_c(1) == 21);
	const std::string exe = self_exe();
	const uint64_t offs[] = { offset_of(sym_site_a), offset_of(sym_site_b),
				  offset_of(sym_site_c), offset_of(sym_site_a) + 1 };

	SECTION("the same names, file:line of this file, one process for the module")
	{
		sym s;
		for (uint64_t off : offs) {
			std::string name = s.name(exe, off);
			CHECK(name == by_hand(exe, off));
			CHECK(name.rfind("test-symbolize.cpp:", 0) == 0);
		}
		CHECK(s.stats().started == 1);
		CHECK(s.warnings().empty());
	}
	SECTION("the one-off form (ctx NULL) gives the same names and leaves no process")
	{
		for (uint64_t off : offs) {
			char out[256];
			REQUIRE(symbolize_addr2line(nullptr, exe.c_str(), off, out, sizeof out) == 0);
			CHECK(std::string(out) == by_hand(exe, off));
			CHECK(no_children());
		}
	}
	SECTION("answers are cached per (module, offset)")
	{
		sym s;
		for (int round = 0; round < 10; round++)
			for (uint64_t off : offs)
				CHECK(s.name(exe, off) == by_hand(exe, off));
		symbolizer_stats st = s.stats();
		CHECK(st.lookups == 40);
		CHECK(st.cached == 36);
		CHECK(st.started == 1);
	}
	SECTION("a short buffer gets the name cut, not overrun")
	{
		sym s;
		char out[8];
		memset(out, 'x', sizeof out);
		REQUIRE(symbolize_addr2line(s.s, exe.c_str(), offs[0], out, 5) == 0);
		CHECK(std::string(out) == by_hand(exe, offs[0]).substr(0, 4));
		CHECK(out[5] == 'x');
	}
}

TEST_CASE("symbolize: live processes capped, least recently used stopped, all reaped")
{
	scratch tmp;
	const std::string a = tmp.link_self("a"), b = tmp.link_self("b"), c = tmp.link_self("c");
	const uint64_t off1 = offset_of(sym_site_b), off2 = offset_of(sym_site_c);
	const std::string want1 = by_hand(self_exe(), off1), want2 = by_hand(self_exe(), off2);
	const int fds_before = open_fds();
	{
		symbolizer_config cfg = {};
		cfg.max_procs = 2;
		sym s(cfg);
		// a, b, c (c stops a), b (still running), a (stops c, the least recently used).
		CHECK(s.name(a, off1) == want1);
		CHECK(s.name(b, off1) == want1);
		CHECK(s.name(c, off1) == want1);
		CHECK(s.name(b, off2) == want2);
		CHECK(s.stats().started == 3);
		CHECK(s.name(a, off2) == want2);
		symbolizer_stats st = s.stats();
		CHECK(st.started == 4);
		CHECK(st.live == 2);
		CHECK(st.peak_live == 2);
		// b was kept, c was not: a new address for b starts nothing, for c one process.
		CHECK(s.name(b, off1 + 1) == by_hand(self_exe(), off1 + 1));
		CHECK(s.stats().started == 4);
		CHECK(s.name(c, off2) == want2);
		CHECK(s.stats().started == 5);
		CHECK(open_fds() == fds_before + 1 + 2 * 2); // the warning file, two pipes a process
	}
	CHECK(open_fds() == fds_before);
	CHECK(no_children());
}

TEST_CASE("symbolize: modules that are not files addr2line reads")
{
	scratch tmp;
	std::string fifo = tmp.dir + "/fifo", dir = tmp.dir + "/dir", text = tmp.dir + "/text";
	REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
	REQUIRE(mkdir(dir.c_str(), 0700) == 0);
	FILE *f = fopen(text.c_str(), "w");
	REQUIRE(f);
	fputs("not an object file\n", f);
	fclose(f);
	sym s;
	auto t0 = std::chrono::steady_clock::now();
	for (const std::string &m : { fifo, dir, tmp.dir + "/missing", std::string("/dev/null") }) {
		int rc = 0;
		CHECK(s.name(m, 0x1000, &rc) == "");
		CHECK(rc == -1);
	}
	CHECK(s.stats().started == 0); // never opened (a FIFO would block), never given to addr2line
	CHECK(seconds_since(t0) < 10);
	int rc = 0;
	CHECK(s.name(text, 0x1000, &rc) == "");
	CHECK(rc == -1);
	CHECK(s.name(text, 0x2000, &rc) == "");
	CHECK(s.stats().started == 1); // refused once, then given up
	CHECK(s.warnings().empty());   // as before: a module without symbols is no error
	char out[16] = "unchanged";
	CHECK(symbolize_addr2line(s.s, "", 0x1000, out, sizeof out) == -1);
	CHECK(symbolize_addr2line(s.s, nullptr, 0x1000, out, sizeof out) == -1);
	CHECK(std::string(out) == "unchanged");
}

namespace {

// A copy of this program at path, with extra objcopy arguments (a debug link, a section).
void copy_self(const std::string &path, const std::string &objcopy_args)
{
	std::string cmd = "cp '" + self_exe() + "' '" + path + "' && objcopy " + objcopy_args +
			  " '" + path + "'";
	REQUIRE(system(cmd.c_str()) == 0);
}

void write_file(const std::string &path, const std::string &bytes)
{
	FILE *f = fopen(path.c_str(), "w");
	REQUIRE(f);
	REQUIRE(fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size());
	fclose(f);
}

} // namespace

// A module that is a regular file, but names as its separate debug file a FIFO, which addr2line
// (BFD) opens blocking: measured, `addr2line -e prog` stayed blocked until killed. Such a module
// is never given to addr2line; the same module whose debug file is a regular file is.
TEST_CASE("symbolize: a module whose separate debug file is not a regular file")
{
	scratch tmp;
	const uint64_t off = offset_of(sym_site_a);
	auto t0 = std::chrono::steady_clock::now();
	// .gnu_debuglink to a FIFO beside the module (objcopy wants a file to link: then the FIFO
	// takes its place).
	std::string mod = tmp.dir + "/prog", debug = tmp.dir + "/prog.debug";
	write_file(debug, "not yet a FIFO\n");
	copy_self(mod, "--add-gnu-debuglink='" + debug + "'");
	REQUIRE(unlink(debug.c_str()) == 0);
	REQUIRE(mkfifo(debug.c_str(), 0600) == 0);
	{
		sym s;
		int rc = 0;
		CHECK(s.name(mod, off, &rc) == "");
		CHECK(rc == -1);
		CHECK(s.stats().started == 0);
	}
	// The same link, the FIFO in the module's .debug/ directory instead.
	REQUIRE(unlink(debug.c_str()) == 0);
	REQUIRE(mkdir((tmp.dir + "/.debug").c_str(), 0700) == 0);
	REQUIRE(mkfifo((tmp.dir + "/.debug/prog.debug").c_str(), 0600) == 0);
	{
		sym s;
		CHECK(s.name(mod, off) == "");
		CHECK(s.stats().started == 0);
	}
	// Reached through a symbolic link to the module: the link's directory and the module's
	// are both looked in.
	std::string other = tmp.dir + "/other";
	REQUIRE(mkdir(other.c_str(), 0700) == 0);
	REQUIRE(symlink(mod.c_str(), (other + "/prog").c_str()) == 0);
	{
		sym s;
		CHECK(s.name(other + "/prog", off) == "");
		CHECK(s.stats().started == 0);
	}
	// A .gnu_debugaltlink (DWARF supplementary file) with an absolute path to a FIFO.
	std::string alt = tmp.dir + "/alt.fifo", altsec = tmp.dir + "/altsec", mod2 = tmp.dir + "/prog2";
	REQUIRE(mkfifo(alt.c_str(), 0600) == 0);
	write_file(altsec, alt + std::string("\0", 1) + std::string(20, '\x5a'));
	copy_self(mod2, "--add-section .gnu_debugaltlink='" + altsec + "'");
	{
		sym s;
		CHECK(s.name(mod2, off) == "");
		CHECK(s.stats().started == 0);
	}
	CHECK(seconds_since(t0) < 10);
	// The control: the debug file a regular file, the module goes to addr2line (which finds
	// no debug information in the stand-in file and names it from the module itself).
	REQUIRE(unlink((tmp.dir + "/.debug/prog.debug").c_str()) == 0);
	write_file(debug, "a regular file\n");
	{
		sym s;
		CHECK(s.name(mod, off) == by_hand(mod, off));
		CHECK(s.stats().started == 1);
	}
}

TEST_CASE("symbolize: a function only for an address inside it, with the offset in it")
{
	scratch tmp;
	const std::string exe = self_exe();
	const uint64_t off = offset_of(sym_site_a);
	symbolizer_config cfg = {};

	SECTION("addr2line's function outside every symbol is not taken")
	{
		// addr2line without line information names the nearest symbol before any address;
		// offset 0x10 is in the ELF header, inside no function.
		std::string program = tmp.script(
			"addr2line", "while read a; do echo sym_site_a; echo '??:0'; done");
		cfg.program = program.c_str();
		{
			sym s(cfg);
			CHECK(s.name(exe, 0x10) == "");
			CHECK(s.name(exe, off + 1) == "sym_site_a+0x1");
			CHECK(s.name(exe, off) == "sym_site_a+0x0");
		}
		CHECK(no_children());
	}
	SECTION("a name longer than the report's keeps its end, the offset")
	{
		std::string program = tmp.script(
			"addr2line", ("while read a; do echo 'ns::f<" + std::string(400, 'x') +
				      ">(int) const'; echo '??:0'; done").c_str());
		cfg.program = program.c_str();
		{
			sym s(cfg);
			for (int pass = 0; pass < 2; pass++) { // the second from the cache
				std::string n = s.name(exe, off + 2);
				INFO(n);
				CHECK(n.size() == 255);
				CHECK(n.compare(0, 8, "ns::f<xx") == 0);
				REQUIRE(n.size() > 30);
				CHECK(n.substr(n.size() - 27) == "...xxxxxxxx>(int) const+0x2");
			}
		}
		CHECK(no_children());
	}
}

TEST_CASE("symbolize: addr2line missing, dying or hanging")
{
	scratch tmp;
	const std::string exe = self_exe();
	const uint64_t off = offset_of(sym_site_a);
	symbolizer_config cfg = {};

	SECTION("missing: no names, one warning")
	{
		cfg.program = "/nonexistent/addr2line";
		sym s(cfg);
		for (uint64_t o : { off, off + 1, off + 2 })
			CHECK(s.name(exe, o) == "");
		std::vector<std::string> w = s.warnings();
		REQUIRE(w.size() == 1);
		INFO(w[0]);
		CHECK(w[0].find("test: cannot run /nonexistent/addr2line") == 0);
		CHECK(s.stats().started <= 1); // 1 under valgrind: the exec fails in the child
		CHECK(no_children());
	}
	SECTION("dying after one answer: that answer kept, restarted, given up after 3 deaths")
	{
		std::string program = tmp.script(
			"addr2line", "read a; echo f; echo /src/x.c:3; read b; kill -KILL $$");
		cfg.program = program.c_str();
		sym s(cfg);
		CHECK(s.name(exe, 0x10) == "x.c:3");
		CHECK(s.name(exe, 0x20) == ""); // it died on this one
		CHECK(s.name(exe, 0x30) == "x.c:3");
		CHECK(s.name(exe, 0x40) == "");
		CHECK(s.name(exe, 0x50) == "x.c:3");
		CHECK(s.name(exe, 0x60) == ""); // the third death: the module is given up
		CHECK(s.name(exe, 0x70) == "");
		CHECK(s.name(exe, 0x10) == "x.c:3"); // cached
		CHECK(s.stats().started == 3);
		std::vector<std::string> w = s.warnings();
		REQUIRE(w.size() == 1);
		INFO(w[0]);
		CHECK(w[0].find("killed by signal 9 on " + exe) != std::string::npos);
		CHECK(no_children());
	}
	SECTION("not reading: a write into a closed pipe is an error, not SIGPIPE")
	{
		// Its stdin is closed before the first answer arrives, so the second write fails.
		std::string program = tmp.script(
			"addr2line", "read a; exec 0<&-; echo f; echo /src/x.c:3; exec sleep 60");
		cfg.program = program.c_str();
		sym s(cfg);
		CHECK(s.name(exe, off) == "x.c:3");
		CHECK(s.name(exe, off + 1) == "");
		std::vector<std::string> w = s.warnings();
		REQUIRE(w.size() == 1);
		INFO(w[0]);
		CHECK(w[0].find("stopped answering on " + exe) != std::string::npos);
		CHECK(s.stats().live == 0);
		CHECK(no_children());
	}
	SECTION("hanging: each module waits the timeout once; after two, addr2line is not asked")
	{
		std::string program = tmp.script("addr2line", "exec sleep 60");
		cfg.program = program.c_str();
		cfg.timeout_ms = 200;
		const std::string a = tmp.link_self("a"), b = tmp.link_self("b"),
				  c = tmp.link_self("c");
		sym s(cfg);
		auto t0 = std::chrono::steady_clock::now();
		CHECK(s.name(a, off) == "");
		CHECK(s.name(a, off + 1) == ""); // given up: no second wait
		CHECK(s.name(b, off) == "");
		CHECK(s.name(c, off) == ""); // two timeouts: not started
		double took = seconds_since(t0);
		CHECK(took >= 0.4);
		CHECK(took < 10);
		CHECK(s.stats().started == 2);
		CHECK(s.stats().live == 0);
		std::vector<std::string> w = s.warnings();
		REQUIRE(w.size() == 1);
		INFO(w[0]);
		CHECK(w[0].find("no answer within 200 ms") != std::string::npos);
		CHECK(no_children());
	}
}
