#version 450
layout(quads, fractional_odd_spacing, cw) in;
in vec3 e_normal[];
in vec2 e_uv[];
layout(binding = 1) uniform Disp { mat4 mvp; float amount; } d;
layout(binding = 2) uniform sampler2D disp_map;
out vec2 f_uv;
out vec3 f_normal;
void main() {
    vec2 t = gl_TessCoord.xy;
    vec4 p = mix(mix(gl_in[0].gl_Position, gl_in[1].gl_Position, t.x), mix(gl_in[3].gl_Position, gl_in[2].gl_Position, t.x), t.y);
    vec3 n = normalize(mix(mix(e_normal[0], e_normal[1], t.x), mix(e_normal[3], e_normal[2], t.x), t.y));
    vec2 uv = mix(mix(e_uv[0], e_uv[1], t.x), mix(e_uv[3], e_uv[2], t.x), t.y);
    p.xyz += n * textureLod(disp_map, uv, 0.0).r * d.amount;
    f_uv = uv;
    f_normal = n;
    gl_Position = d.mvp * p;
}
