// The embedded migrations.
