// mesh_steps.vh: what the two 4 x 4 mesh testbenches (tb_mesh.v, tb_mesh_sparse.v) share: the
// clock, the sampling of every PE's accumulator after each step (by acc_vld, or by latency
// with +LAT), the C preload at the start of a tile and the drain and check at its end.
// Included inside the testbench module after tb/golden_io.vh, as `include "tb/mesh_steps.vh"`
// (relative to testbenches/verilog, like golden_io.vh); the testbench declares clk, rst, load,
// c_flat, acc_flat, acc_vld_flat, its localparams DRAIN and DRAIN_MAX, and sets tile_steps (the
// steps a tile takes: K dense, K/2 sparse) before its first tile.

    // Lint waiver (BLKSEQ): the clock generator and the sampling process below are testbench
    // code, not hardware: they assign with '=' on purpose, so that loop variables and the
    // step memory are updated in order within one process (no register is inferred).
    /* verilator lint_off BLKSEQ */
    always #5 clk = ~clk;

    integer tile_steps;           // steps a tile takes (step records per element of D)
    integer lat;
    integer cyc = 0;              // clock edges so far
    integer t0 = -1000;           // the edge that takes step 0 of the current tile into PE (0, 0)
    integer cur_ti = 0, cur_tj = 0;
    integer si, sj, ss;
    // Lint waiver (UNUSEDSIGNAL): a step record's index; +STEPS is refused when the records
    // exceed MAXS = 2^18, so only its low 18 bits address the step memory.
    /* verilator lint_off UNUSEDSIGNAL */
    integer sidx;
    /* verilator lint_on UNUSEDSIGNAL */
    integer seen [0:15];          // acc_vld cycles of each PE in the current tile
    integer first_lat = -1;       // latency of PE (0, 0)'s first step, as acc_vld showed it
    reg by_lat = 1'b0;            // +LAT given: sample by latency, not by acc_vld

    always @(posedge clk) cyc <= cyc + 1;

    // Step sampling, on the falling edge (between the clock edges, every register settled).
    always @(negedge clk) begin
        for (si = 0; si < 4; si = si + 1)
            for (sj = 0; sj < 4; sj = sj + 1) begin
                if (by_lat) begin
                    // PE (i, j) takes step s at edge t0 + s + i + j; acc shows it lat - 1
                    // edges later.
                    ss = cyc - t0 - si - sj - (lat - 1);
                end else if (acc_vld_flat[4 * si + sj]) begin
                    ss = seen[4 * si + sj];
                    seen[4 * si + sj] = ss + 1;
                    if (si == 0 && sj == 0 && ss == 0 && first_lat < 0)
                        first_lat = cyc - t0 + 1;
                end else begin
                    ss = -1;
                end
                if (steps_on && ss >= 0 && ss < tile_steps && cur_ti + si < m && cur_tj + sj < n) begin
                    sidx = ((cur_ti + si) * n + cur_tj + sj) * tile_steps + ss;
                    smem[sidx[17:0]] = acc_flat[32 * (4 * si + sj) +: 32];
                end
            end
    end
    /* verilator lint_on BLKSEQ */

    // True when every in-range PE of the current tile has shown `steps` steps.
    function all_seen;
        input integer steps;
        integer x, y;
        begin
            all_seen = 1'b1;
            for (x = 0; x < 4; x = x + 1)
                for (y = 0; y < 4; y = y + 1)
                    if (cur_ti + x < m && cur_tj + y < n && seen[4 * x + y] < steps)
                        all_seen = 1'b0;
        end
    endfunction

    // Reads +LAT (sampling by latency); ok is 0, after an ERROR line, when the run must stop.
    task latency_option;
        output ok;
        begin
            ok = 1'b1;
            if ($value$plusargs("LAT=%d", lat)) begin
                by_lat = 1'b1;
                if (lat < 1) begin
                    $display("ERROR: +LAT=%0d: the latency counts the edge that takes the operands, so it is at least 1", lat);
                    ok = 1'b0;
                end
            end else begin
                lat = 0;
            end
        end
    endtask

    // The start of tile (ti, tj): C preloaded into the accumulators (one cycle of load), the
    // step counters cleared; the tile's step 0 is taken at the next edge.
    task start_tile;
        input integer ti, tj;
        integer x, y;
        begin
            for (x = 0; x < 4; x = x + 1)
                for (y = 0; y < 4; y = y + 1)
                    c_flat[32 * (4 * x + y) +: 32] =
                        (ti + x < m && tj + y < n) ? cmem[(ti + x) * n + tj + y] : 32'd0;
            load = 1'b1;
            @(negedge clk);
            load = 1'b0;
            cur_ti = ti;
            cur_tj = tj;
            for (x = 0; x < 16; x = x + 1)
                seen[x] = 0;
            t0 = cyc + 1;
        end
    endtask

    // The end of tile (ti, tj), after its last step: the drain (skew and wavefront, 3 + 3
    // cycles, plus the PE's stages; by latency a fixed wait, by acc_vld until every PE has
    // shown its tile_steps steps, at most DRAIN_MAX), then every in-range element of D checked.
    task finish_tile;
        input integer ti, tj;
        integer x, y, waited;
        begin
            if (by_lat) begin
                repeat (DRAIN + (lat > 2 ? lat - 2 : 0)) @(negedge clk);
            end else begin
                waited = 0;
                while (!all_seen(tile_steps) && waited < DRAIN_MAX) begin
                    @(negedge clk);
                    waited = waited + 1;
                end
                if (!all_seen(tile_steps))
                    $display("TIMEOUT: tile (%0d, %0d): not every PE raised acc_vld %0d times within %0d cycles of the last step",
                             ti, tj, tile_steps, DRAIN_MAX);
                @(negedge clk);
            end
            for (x = 0; x < 4; x = x + 1)
                for (y = 0; y < 4; y = y + 1)
                    if (ti + x < m && tj + y < n)
                        check_element(ti + x, tj + y, acc_flat[32 * (4 * x + y) +: 32]);
        end
    endtask
