// A file seen whole or not at all (libnoisetool/atomic-file.c): the two kinds of temporary name,
// link() that never replaces a file and leaves no temporary file, rename() that does replace,
// the mode less the umask, and the errors a writer meets.
#include <catch2/catch.hpp>

#include <cerrno>
#include <cstdio>
#include <string>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <noisetool-private/atomic-file.h>

#include "tempdir.h"

namespace {

// Write text to fd, all of it.
void put(int fd, const std::string &text)
{
	REQUIRE(write(fd, text.data(), text.size()) == (ssize_t)text.size());
}

// The permission bits of the file at path.
unsigned mode_of(const std::string &path)
{
	struct stat st;
	REQUIRE(stat(path.c_str(), &st) == 0);
	return st.st_mode & 07777;
}

} // namespace

TEST_CASE("atomic-file: a unique temporary name beside the file, then link()")
{
	tempdir dir;
	REQUIRE(!dir.path().empty());
	std::string path = dir / "out.json";
	char tmp[NT_ATOMIC_FILE_TMP_MAX], tmp2[NT_ATOMIC_FILE_TMP_MAX];
	mode_t old = umask(022);
	int fd = nt_atomic_file_create(path.c_str(), NT_ATOMIC_FILE_TMP_UNIQUE, 0644, tmp, sizeof tmp);
	int fd2 = nt_atomic_file_create(path.c_str(), NT_ATOMIC_FILE_TMP_UNIQUE, 0666, tmp2,
					sizeof tmp2);
	umask(old);
	REQUIRE(fd >= 0);
	REQUIRE(fd2 >= 0);
	std::string want = path + ".tmp." + std::to_string(getpid()) + ".";
	CHECK(std::string(tmp).rfind(want, 0) == 0);
	CHECK(std::string(tmp).size() == want.size() + 6);
	CHECK(std::string(tmp) != std::string(tmp2)); // never the same file twice
	CHECK(mode_of(tmp) == 0644);
	CHECK(mode_of(tmp2) == 0644); // less the umask
	nt_atomic_file_discard(fd2, tmp2);

	put(fd, "{}\n");
	REQUIRE(nt_atomic_file_close(fd) == 0);
	CHECK(dir.entries().count("out.json") == 0); // not seen before it is complete
	REQUIRE(nt_atomic_file_link(tmp, path.c_str()) == 0);
	CHECK(slurp(path) == "{}\n");
	CHECK(dir.entries() == std::set<std::string>{ "out.json" }); // no temporary file left

	SECTION("link() never replaces a file: the file stays, the temporary file goes")
	{
		fd = nt_atomic_file_create(path.c_str(), NT_ATOMIC_FILE_TMP_UNIQUE, 0644, tmp,
					   sizeof tmp);
		REQUIRE(fd >= 0);
		put(fd, "new\n");
		REQUIRE(nt_atomic_file_close(fd) == 0);
		CHECK(nt_atomic_file_link(tmp, path.c_str()) == -EEXIST);
		CHECK(slurp(path) == "{}\n");
		CHECK(dir.entries() == std::set<std::string>{ "out.json" });
	}
	SECTION("rename() replaces it")
	{
		fd = nt_atomic_file_create(path.c_str(), NT_ATOMIC_FILE_TMP_UNIQUE, 0644, tmp,
					   sizeof tmp);
		REQUIRE(fd >= 0);
		FILE *f = fdopen(fd, "w");
		REQUIRE(f != nullptr);
		fputs("new\n", f);
		REQUIRE(nt_atomic_file_fclose(f) == 0);
		REQUIRE(nt_atomic_file_rename(tmp, path.c_str()) == 0);
		CHECK(slurp(path) == "new\n");
		CHECK(dir.entries() == std::set<std::string>{ "out.json" });
	}
	SECTION("a rename that fails removes the temporary file")
	{
		REQUIRE(mkdir((dir / "sub").c_str(), 0755) == 0);
		spit(dir / "sub/x", "keeps sub non-empty");
		fd = nt_atomic_file_create(path.c_str(), NT_ATOMIC_FILE_TMP_UNIQUE, 0644, tmp,
					   sizeof tmp);
		REQUIRE(fd >= 0);
		REQUIRE(nt_atomic_file_close(fd) == 0);
		CHECK(nt_atomic_file_rename(tmp, (dir / "sub").c_str()) < 0);
		CHECK(dir.entries() == std::set<std::string>{ "out.json", "sub" });
	}
}

TEST_CASE("atomic-file: a long name is cut to fit NAME_MAX in the temporary name")
{
	tempdir dir;
	REQUIRE(!dir.path().empty());
	std::string path = dir / std::string(250, 'n');
	char tmp[NT_ATOMIC_FILE_TMP_MAX];
	int fd = nt_atomic_file_create(path.c_str(), NT_ATOMIC_FILE_TMP_UNIQUE, 0644, tmp, sizeof tmp);
	REQUIRE(fd >= 0);
	std::string base = std::string(tmp).substr(dir.path().size() + 1);
	CHECK(base.size() <= 255);
	CHECK(base.rfind(std::string(200, 'n') + ".tmp.", 0) == 0);
	REQUIRE(nt_atomic_file_close(fd) == 0);
	REQUIRE(nt_atomic_file_link(tmp, path.c_str()) == 0);
	CHECK(dir.entries() == std::set<std::string>{ std::string(250, 'n') });
}

TEST_CASE("atomic-file: the fixed temporary name, one writer at a time, opened by others")
{
	tempdir dir;
	REQUIRE(!dir.path().empty());
	std::string path = dir / "job.ntlog";
	char tmp[NT_ATOMIC_FILE_TMP_MAX], again[NT_ATOMIC_FILE_TMP_MAX];
	CHECK(nt_atomic_file_open_fixed(path.c_str()) == -ENOENT); // nobody created it yet
	mode_t old = umask(077);
	int fd = nt_atomic_file_create(path.c_str(), NT_ATOMIC_FILE_TMP_FIXED, 0644, tmp, sizeof tmp);
	umask(old);
	REQUIRE(fd >= 0);
	CHECK(std::string(tmp) == path + ".tmp");
	CHECK(mode_of(tmp) == 0600); // 0644 less the umask
	CHECK(nt_atomic_file_create(path.c_str(), NT_ATOMIC_FILE_TMP_FIXED, 0644, again,
				    sizeof again) == -EEXIST);
	CHECK(again[0] == '\0');
	// Another writer of the same job: its part at its own offset.
	int other = nt_atomic_file_open_fixed(path.c_str());
	REQUIRE(other >= 0);
	REQUIRE(pwrite(other, "world", 5, 6) == 5);
	REQUIRE(nt_atomic_file_close(other) == 0);
	put(fd, "hello ");
	REQUIRE(nt_atomic_file_close(fd) == 0);
	REQUIRE(nt_atomic_file_link(tmp, path.c_str()) == 0);
	CHECK(slurp(path) == "hello world");
	CHECK(dir.entries() == std::set<std::string>{ "job.ntlog" });

	SECTION("a symlink in the fixed name's place is refused, never written through")
	{
		spit(dir / "victim", "kept\n");
		REQUIRE(symlink("victim", (dir / "other.ntlog.tmp").c_str()) == 0);
		CHECK(nt_atomic_file_open_fixed((dir / "other.ntlog").c_str()) == -ELOOP);
		CHECK(slurp(dir / "victim") == "kept\n");
	}

	SECTION("given up: nothing is left")
	{
		fd = nt_atomic_file_create((dir / "other.ntlog").c_str(), NT_ATOMIC_FILE_TMP_FIXED,
					   0644, tmp, sizeof tmp);
		REQUIRE(fd >= 0);
		nt_atomic_file_discard(fd, tmp);
		CHECK(dir.entries() == std::set<std::string>{ "job.ntlog" });
	}
}

TEST_CASE("atomic-file: errors")
{
	tempdir dir;
	REQUIRE(!dir.path().empty());
	char tmp[NT_ATOMIC_FILE_TMP_MAX] = "x";
	for (auto kind : { NT_ATOMIC_FILE_TMP_UNIQUE, NT_ATOMIC_FILE_TMP_FIXED }) {
		INFO("kind " << kind);
		std::string missing = dir / "none/out";
		CHECK(nt_atomic_file_create(missing.c_str(), kind, 0644, tmp, sizeof tmp) == -ENOENT);
		CHECK(tmp[0] == '\0');
		char small[8];
		CHECK(nt_atomic_file_create((dir / "out").c_str(), kind, 0644, small, sizeof small) ==
		      -ENAMETOOLONG);
		CHECK(nt_atomic_file_create(nullptr, kind, 0644, tmp, sizeof tmp) == -EINVAL);
	}
	CHECK(nt_atomic_file_close(-1) == -EBADF);
	CHECK(dir.entries().empty());
}
