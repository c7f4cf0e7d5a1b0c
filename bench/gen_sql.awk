# gen_sql.awk: writes the SQL script of bench/run.sh's sqlite workload on stdout: the real
# Debian sqlite3 shell, run on an in-memory database (no disk I/O in the timing), loads
# ROWS orders and ROWS/10 customers inside one large transaction through two indexes, then
# joins, groups, updates and deletes, so sqlite's page cache, B-tree cursors, statement
# preparation and string values all go through malloc. Deterministic (awk's srand with a
# fixed seed); the output of the script (a few aggregate lines) is the same on every run,
# which run.sh uses to check that a profiler did not change the program's behaviour.
#
# Usage: awk -v rows=60000 -f bench/gen_sql.awk > script.sql
BEGIN {
    if (rows + 0 < 10)
        rows = 60000
    srand(20261122)
    ncust = int(rows / 10)
    print "PRAGMA cache_size = -65536;"
    print "CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT, city TEXT, note TEXT);"
    print "CREATE TABLE orders(id INTEGER PRIMARY KEY, customer INTEGER, item TEXT, qty INTEGER, price REAL, comment TEXT);"
    print "CREATE INDEX orders_customer ON orders(customer);"
    print "CREATE INDEX orders_item ON orders(item, qty);"
    print "BEGIN;"
    for (i = 1; i <= ncust; i++)
        printf "INSERT INTO customer VALUES(%d, 'customer-%07d', 'city-%03d', '%s');\n", i, i,
            int(rand() * 500), pad(int(rand() * 120))
    for (i = 1; i <= rows; i++)
        printf "INSERT INTO orders VALUES(%d, %d, 'item-%05d', %d, %.2f, '%s');\n", i,
            1 + int(rand() * ncust), int(rand() * 20000), 1 + int(rand() * 50),
            rand() * 1000, pad(int(rand() * 200))
    print "COMMIT;"
    print "SELECT count(*), sum(qty), round(sum(qty * price), 2) FROM orders;"
    print "SELECT c.city, count(*), sum(o.qty) FROM orders o JOIN customer c ON c.id = o.customer GROUP BY c.city ORDER BY 2 DESC, 1 LIMIT 5;"
    print "SELECT item, count(*) FROM orders GROUP BY item ORDER BY 2 DESC, 1 LIMIT 5;"
    print "BEGIN;"
    print "UPDATE orders SET comment = comment || '-amended', qty = qty + 1 WHERE id % 7 = 0;"
    print "DELETE FROM orders WHERE id % 5 = 0;"
    print "COMMIT;"
    print "SELECT count(*), sum(length(comment)) FROM orders;"
    print "SELECT group_concat(name, ',') FROM (SELECT name FROM customer ORDER BY note DESC, id LIMIT 3);"
}

# n letters of filler text, starting at a place that depends on n.
function pad(n) {
    if (filler == "")
        for (k = 0; k < 10; k++)
            filler = filler "the quick brown fox jumps over the lazy dog "
    return substr(filler, 1 + n % 40, n)
}
