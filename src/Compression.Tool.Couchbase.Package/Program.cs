// docz with its Couchbase plugin beside it: the command line is docz's own.
return Compression.Tool.Program.Main(args);
