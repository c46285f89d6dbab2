// The job's identity lines: a command line quoted so that bash reads back the same arguments,
// cut to its bound at a whole character or escape with a marker; an MPI library's first line.
#include <catch2/catch.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <cstdlib>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include <noisetool-private/jobinfo.h>

namespace {

// Arguments as /proc/PID/cmdline holds them: each ended by a NUL.
std::string cmdline(const std::vector<std::string> &args)
{
	std::string s;
	for (const auto &a : args)
		s += a + '\0';
	return s;
}

std::string command(const std::string &raw, bool more = false,
		    size_t size = NT_JOBINFO_COMMAND_BYTES)
{
	std::vector<char> out(size);
	int n = nt_jobinfo_command(raw.data(), raw.size(), more, out.data(), size);
	REQUIRE(n >= 0);
	REQUIRE((size_t)n == std::strlen(out.data()));
	return std::string(out.data());
}

std::string line(const std::string &text, size_t size = NT_JOBINFO_MPI_BYTES)
{
	std::vector<char> out(size);
	int n = nt_jobinfo_line(text.c_str(), out.data(), size);
	REQUIRE(n >= 0);
	REQUIRE((size_t)n == std::strlen(out.data()));
	return std::string(out.data());
}

const std::string marker = NT_JOBINFO_TRUNCATED;

bool ends_with(const std::string &s, const std::string &end)
{
	return s.size() >= end.size() && s.compare(s.size() - end.size(), end.size(), end) == 0;
}

} // namespace

TEST_CASE("a command line is quoted only where a shell needs it", "[jobinfo]")
{
	CHECK(command(cmdline({ "/usr/bin/app", "-n", "4", "--out=/tmp/x,y:z@1%+" })) ==
	      "/usr/bin/app -n 4 --out=/tmp/x,y:z@1%+");
	CHECK(command(cmdline({ "app", "a b", "$HOME", "*", "~", "#x", "a;b" })) ==
	      "app 'a b' '$HOME' '*' '~' '#x' 'a;b'");
	CHECK(command(cmdline({ "app", "it's" })) == "app 'it'\\''s'");
	CHECK(command(cmdline({ "app", "" })) == "app ''");
	CHECK(command(cmdline({ "app", "h\xc3\xa9llo" })) == "app 'h\xc3\xa9llo'");
	// Control characters and bytes that are not UTF-8: $'...', so the line is one line.
	CHECK(command(cmdline({ "app", "a\nb", "t\tq'\\" })) == "app $'a\\nb' $'t\\tq\\'\\\\'");
	CHECK(command(cmdline({ "app", "\xff", "\x01", "\xc2\x85" })) ==
	      "app $'\\xff' $'\\x01' $'\\xc2\\x85'");
	// No arguments at all, a last argument without its NUL (a cut read).
	CHECK(command("") == "");
	CHECK(command(std::string(1, '\0')) == "");
	CHECK(command("app\0-v", false) == "app");
	CHECK(command(std::string("app\0-v", 6)) == "app -v");
}

TEST_CASE("bash reads the quoted line back as the same arguments", "[jobinfo]")
{
	if (std::system("bash -c true >/dev/null 2>&1") != 0) {
		WARN("no bash: the round trip is not checked");
		return;
	}
	std::vector<std::string> args = { "printf", "%s\\0", "plain", "a b", "it's", "a\nb", "",
					  "tab\there", "back\\slash", "$HOME", "*", "h\xc3\xa9llo",
					  "\xff\x01", "--x=1", "\"dq\"", "\x7f" "del" };
	std::string quoted = command(cmdline(args));
	CHECK(quoted.find('\n') == std::string::npos);
	std::string script = "/tmp/nt-jobinfo-test-" + std::to_string(getpid()) + ".sh";
	FILE *f = std::fopen(script.c_str(), "w");
	REQUIRE(f);
	std::fprintf(f, "%s\n", quoted.c_str());
	std::fclose(f);
	FILE *p = popen(("bash " + script).c_str(), "r");
	REQUIRE(p);
	std::string got;
	for (int c; (c = std::fgetc(p)) != EOF;)
		got += (char)c;
	CHECK(pclose(p) == 0);
	std::remove(script.c_str());
	std::vector<std::string> printed(args.begin() + 2, args.end());
	CHECK(got == cmdline(printed));
}

TEST_CASE("a long command line is cut at its bound, with a marker", "[jobinfo]")
{
	SECTION("a 10 KiB argument")
	{
		std::string c = command(cmdline({ "app", std::string(10240, 'x') }));
		CHECK(c.size() == NT_JOBINFO_COMMAND_BYTES - 1);
		CHECK(ends_with(c, marker));
		CHECK(c.compare(0, 6, "app xx") == 0);
	}
	SECTION("never inside an escape or a character")
	{
		std::string c = command(cmdline({ "app", std::string(2000, '\n') }));
		CHECK(ends_with(c, marker));
		std::string body = c.substr(0, c.size() - marker.size());
		REQUIRE(body.compare(0, 6, "app $'") == 0);
		CHECK((body.size() - 6) % 2 == 0); // whole "\n" escapes
		CHECK(body.size() + marker.size() <= NT_JOBINFO_COMMAND_BYTES - 1);
		std::string e;
		for (int i = 0; i < 1000; i++)
			e += "\xc3\xa9"; // two bytes each
		c = command(cmdline({ "app", e }), false, 64);
		body = c.substr(0, c.size() - marker.size());
		CHECK((body.size() - 5) % 2 == 0); // "app '" then whole characters
	}
	SECTION("exactly at the bound: no marker; one byte more: cut")
	{
		std::string fits(NT_JOBINFO_COMMAND_BYTES - 1 - 4, 'y');
		CHECK(command(cmdline({ "app", fits })) == "app " + fits);
		std::string c = command(cmdline({ "app", fits + "y" }));
		CHECK(c == "app " + fits.substr(0, fits.size() - marker.size() + 1 - 1) + marker);
	}
	SECTION("only the start of it was read")
	{
		CHECK(command(cmdline({ "app", "-v" }), true) == "app -v" + marker);
	}
	SECTION("no room even for the marker")
	{
		char out[4];
		CHECK(nt_jobinfo_command("a", 1, false, out, sizeof out) == -EINVAL);
		CHECK(nt_jobinfo_command(nullptr, 1, false, out, 64) == -EINVAL);
		CHECK(nt_jobinfo_line("a", out, sizeof out) == -EINVAL);
	}
}

TEST_CASE("an MPI library's version is its first line, blanks folded", "[jobinfo]")
{
	CHECK(line("MPICH Version:\t4.0.2\nMPICH Release date: Thu Apr  7 12:34:45 CDT 2022\n") ==
	      "MPICH Version: 4.0.2");
	CHECK(line("Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4, repo rev: v4.1.4, May "
		   "26, 2022") == "Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4, repo rev: "
				  "v4.1.4, May 26, 2022");
	CHECK(line("  \t lead\x1b and\x01trail  \r\nnext") == "lead and trail");
	CHECK(line("bad \xff byte") == "bad ? byte");
	CHECK(line("") == "");
	std::string l = line(std::string(300, 'v'));
	CHECK(l.size() == NT_JOBINFO_MPI_BYTES - 1);
	CHECK(ends_with(l, marker));
}

namespace {

// A made-up environment for nt_jobinfo_batch (its get is a plain function pointer).
std::vector<std::pair<std::string, std::string>> fake_env;

char *fake_getenv(const char *name)
{
	for (auto &kv : fake_env)
		if (kv.first == name)
			return &kv.second[0];
	return nullptr;
}

struct nt_jobinfo_batch batch(std::vector<std::pair<std::string, std::string>> env, unsigned uid = 1000)
{
	fake_env = std::move(env);
	struct nt_jobinfo_batch b;
	std::memset(&b, 'x', sizeof b); // every field must be written
	nt_jobinfo_batch_from_env(fake_getenv, uid, &b);
	return b;
}

} // namespace

TEST_CASE("the batch job and user come from the environment", "[jobinfo]")
{
	SECTION("a Slurm step") {
		auto b = batch({ { "SLURM_JOB_ID", "1234" }, { "SLURM_STEP_ID", "0" },
				 { "SLURM_JOB_NODELIST", "node[01-04]" }, { "SLURM_JOB_USER", "alice" },
				 { "USER", "bob" } });
		CHECK(std::string(b.system) == "slurm");
		CHECK(std::string(b.job) == "1234.0");
		CHECK(std::string(b.nodes) == "node[01-04]");
		CHECK(std::string(b.user) == "alice");
	}
	SECTION("Slurm's special steps by name, a job without a step") {
		CHECK(std::string(batch({ { "SLURM_JOB_ID", "7" }, { "SLURM_STEP_ID", "4294967294" } }).job) ==
		      "7.batch");
		CHECK(std::string(batch({ { "SLURM_JOB_ID", "7" }, { "SLURM_STEP_ID", "4294967293" } }).job) ==
		      "7.extern");
		auto b = batch({ { "SLURM_JOB_ID", "7" }, { "USER", "bob" } });
		CHECK(std::string(b.job) == "7");
		CHECK(std::string(b.nodes) == "");
		CHECK(std::string(b.user) == "bob"); // no SLURM_JOB_USER
	}
	SECTION("PBS, LSF (an array's element), Flux") {
		auto p = batch({ { "PBS_JOBID", "5678.server" }, { "PBS_O_LOGNAME", "carol" } });
		CHECK(std::string(p.system) == "pbs");
		CHECK(std::string(p.job) == "5678.server");
		CHECK(std::string(p.user) == "carol");
		auto l = batch({ { "LSB_JOBID", "42" }, { "LSB_JOBINDEX", "3" }, { "LOGNAME", "dan" } });
		CHECK(std::string(l.system) == "lsf");
		CHECK(std::string(l.job) == "42[3]");
		CHECK(std::string(l.user) == "dan");
		CHECK(std::string(batch({ { "LSB_JOBID", "42" }, { "LSB_JOBINDEX", "0" } }).job) == "42");
		CHECK(std::string(batch({ { "FLUX_JOB_ID", "f2abc" } }).system) == "flux");
	}
	SECTION("Slurm first when several are set; empty variables are not set") {
		auto b = batch({ { "PBS_JOBID", "" }, { "SLURM_JOB_ID", "9" }, { "LSB_JOBID", "42" } });
		CHECK(std::string(b.system) == "slurm");
		auto e = batch({ { "SLURM_JOB_ID", "" }, { "USER", "" }, { "LOGNAME", "" } }, 4242);
		CHECK(std::string(e.system) == "");
		CHECK(std::string(e.job) == "");
		CHECK(std::string(e.user) == "uid 4242");
	}
	SECTION("outside a batch job: the user alone") {
		auto b = batch({}, 0);
		CHECK(std::string(b.system) == "");
		CHECK(std::string(b.job) == "");
		CHECK(std::string(b.nodes) == "");
		CHECK(std::string(b.user) == "uid 0");
	}
	SECTION("values are one line, cut to their fields with the marker") {
		std::string nodes = "n[" + std::string(400, '1') + "]";
		auto b = batch({ { "SLURM_JOB_ID", "1\n2" }, { "SLURM_JOB_NODELIST", nodes },
				 { "SLURM_JOB_USER", "a\x1b[31mb" } });
		CHECK(std::string(b.job) == "1"); // its first line
		CHECK(std::strlen(b.nodes) == NT_JOBINFO_NODES_BYTES - 1);
		CHECK(ends_with(b.nodes, marker));
		CHECK(std::string(b.user) == "a [31mb");
	}
}
