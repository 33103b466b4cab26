#include "cli/cli.h"

int main(int argc, char** argv) { return peerbloom::cli::Main(argc, argv); }
