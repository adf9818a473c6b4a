function r = fma(a, b, c)
% GNU Octave 7 has no fma (MATLAB does). The published CDNA2 model (pair-wise sums) calls
% fma(x, 1, y) on single-precision scalars to add two FP32 values with one rounding; this
% shim returns a.*b + c rounded once to nearest even in single precision when an operand is
% single, and in double precision otherwise (only for b == 1, the sum the models need).
%
% Single: a.*b is exact in double for single operands; the sum s + c is split exactly into
% hi + lo (two-sum), and hi rounded to single is the correctly rounded result unless hi lies
% exactly halfway between two singles and lo breaks the tie.
if isa(a, 'single') || isa(b, 'single') || isa(c, 'single')
  p = double(a) .* double(b);
  c = double(c);
  r = single(zeros(size(p + c)));
  for i = 1:numel(r)
    pi_ = p(min(i, numel(p))); ci = c(min(i, numel(c)));
    hi = pi_ + ci;
    if ~isfinite(hi)
      r(i) = single(hi);
      continue;
    end
    t = hi - pi_;
    lo = (pi_ - (hi - t)) + (ci - t);
    ri = single(hi);
    d = hi - double(ri);
    if lo ~= 0 && d ~= 0 && sign(lo) == sign(d)
      other = double(ri) + 2 * d;
      if double(single(other)) == other
        ri = single(other); % hi was a tie; lo pushes it away from ri
      end
    end
    r(i) = ri;
  end
else
  if any(b(:) ~= 1)
    error('fma shim: double operands only with b == 1');
  end
  r = a + c;
end
end
