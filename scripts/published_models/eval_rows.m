% Evaluates one published tensor-core model on the rows of a file, under GNU Octave.
%
% usage: octave-cli -q eval_rows.m MODELS_DIR MODEL INFORMAT OUTFORMAT ROWS_FILE OUT_FILE
%
% MODELS_DIR: the `models` folder of north-numerical-computing/MATLAB-tensor-core (not part of
% this project). MODEL: a function there (H100TC, B200TC, ...). ROWS_FILE: one row per line,
% the float64 bit patterns in hex of a(1..K), then b(1..K), then c, separated by spaces.
% OUT_FILE: one float64 bit pattern in hex per row, the model's D.
args = argv();
addpath(args{1}); addpath(fullfile(args{1}, 'tools'));
warning('off', 'Octave:shadowed-function');
addpath(fullfile(fileparts(mfilename('fullpath')), 'octave_shims'));
model = str2func(args{2});
informat = args{3}; outformat = args{4};
fin = fopen(args{5}, 'r'); fout = fopen(args{6}, 'w');
while true
  line = fgetl(fin);
  if ~ischar(line), break; end
  words = strsplit(strtrim(line), ' ');
  v = hex2num(char(words));
  k = (numel(v) - 1) / 2;
  a = reshape(v(1:k), 1, k); b = reshape(v(k+1:2*k), k, 1); c = v(end);
  if strcmp(args{2}, 'V100TC')
    evalc('d = model(1, a, b, 1, c, outformat);');
  elseif any(strcmp(args{2}, {'MI100MC', 'MI210MC', 'MI250MC', 'MI300MC', 'MI300XMC', 'MI300AMC'}))
    evalc('d = model(1, a, b, 1, c, informat);');
  else
    evalc('d = model(1, a, b, 1, c, informat, outformat);');
  end
  fprintf(fout, '%s\n', num2hex(double(d)));
end
fclose(fin); fclose(fout);
