#version 450
// Particle billboards: VS animates centres, GS expands points into quads.
layout(location = 0) in vec4 a_pos_life;
layout(location = 1) in vec4 a_color;
layout(binding = 0) uniform P { mat4 view; mat4 proj; float time; } p;
out vec4 g_color;
out float g_size;
void main() {
    float age = fract(p.time * 0.1 + a_pos_life.w);
    g_color = vec4(a_color.rgb, a_color.a * (1.0 - age));
    g_size = mix(0.1, 0.5, age);
    gl_Position = p.view * vec4(a_pos_life.xyz + vec3(0.0, age * 2.0, 0.0), 1.0);
}
